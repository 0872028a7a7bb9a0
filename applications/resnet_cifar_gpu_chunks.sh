#!/bin/bash
# ResNet-20/56/110 on CIFAR-10 at the paper's 64k steps, in chunks: each call trains until
# LIMIT seconds, then SIGKILLs; `--resume` continues from the newest epoch checkpoint.
# Usage: OUT=dir bash applications/resnet_cifar_gpu_chunks.sh DATASET EPOCHS LIMIT 20 56 110
# Each net's run folder goes back as $OUT/rN.tgz (its newest checkpoint only) with its log;
# a later call with .data/rN.tgz present unpacks it and resumes. PY picks the Python.
set -u
DATASET=$1; EPOCHS=$2; LIMIT=$3; shift 3
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false KERAS_BACKEND=jax
mkdir -p /tmp/runs
for n in "$@"; do [ -f .data/r$n.tgz ] && tar xzf .data/r$n.tgz -C /tmp/runs; done
for n in "$@"; do
  RES=""; [ -d /tmp/runs/r$n/checkpoint ] && RES=--resume
  echo "== resnet${n}_cifar $RES $(date -u +%T)" >> /tmp/runs/r$n.log
  timeout -s KILL $LIMIT ${PY:-python3} -m keras_paperzoo train resnet-cifar --preset resnet${n}_cifar --dataset $DATASET \
    --epochs $EPOCHS --backend jax --output-dir /tmp/runs/r$n --verbose 2 $RES >> /tmp/runs/r$n.log 2>&1 &
done
wait
for n in "$@"; do
  echo "== end $(date -u +%T)" >> /tmp/runs/r$n.log
  cp /tmp/runs/r$n.log $OUT/r$n.log
  # the newest epoch's weights only (state.json names it first; the older one stays behind)
  old=$(ls /tmp/runs/r$n/checkpoint/train/epoch-*.weights.h5 2>/dev/null | sort | head -n -1)
  (cd /tmp/runs && tar czf $OUT/r$n.tgz $(for f in $old; do echo --exclude=${f#/tmp/runs/}; done) r$n r$n.log)
done
ls -la $OUT
