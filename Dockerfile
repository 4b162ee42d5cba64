# GPU training container for screamcast (not built or run in this project's CI: there is no
# GPU or registry access there; see docs/training.md).
# docker build -t screamcast .   ;   docker run --gpus all -v $PWD/runs:/work/runs screamcast \
#   python scripts/train.py experiment=stage1_pretrain64 run_dir=runs/stage1
FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime

WORKDIR /work
COPY pyproject.toml README.md ./
COPY screamcast ./screamcast
COPY scripts ./scripts
COPY configs ./configs
# torch comes from the base image: the >=2.4 range keeps it
RUN pip install --no-cache-dir -e . && python -c "import screamcast, torch; print(torch.__version__)"
ENV PYTHONUNBUFFERED=1
CMD ["python", "scripts/train.py", "--help"]
