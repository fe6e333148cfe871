#!/usr/bin/env bash
# Train both course models on the lent GPU machine and leave what comes back under $OUT.
#
# Runs from the repository root there, with the machine's own python3 (torch + CUDA, transformers,
# numpy, Pillow; no .venv, no network). Needs the pre-tokenized corpus carried along:
#   run(command="bash scripts/train_on_device.sh", carry=["corpus/tokens", "corpus/tokenizers"])
# Writes 7 files to $OUT: train.log, results.json, training.json, curve.png, heads.png,
# course-gpt2.tar.gz, course-roberta.tar.gz (each tar ~9 MB: fp16 weights + tokenizer files).
# MINUTES (per model, default 2) sets the training budget; the whole script takes about
# 2 * MINUTES + 1.5 minutes on an H200.
set -uo pipefail
OUT=${OUT:-runs/device-out}
RUN=runs/gpu
PY=${PYTHON:-python3}
MINUTES=${MINUTES:-2}
PRESET=${PRESET:-gpu}  # PRESET=smoke checks this script on a CPU in seconds
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$OUT" "$RUN"
LOG="$OUT/train.log"
{
  nvidia-smi -L || true
  $PY -c "import torch, transformers, numpy, PIL; print('torch', torch.__version__, 'transformers', transformers.__version__, 'numpy', numpy.__version__, 'Pillow', PIL.__version__, 'cuda', torch.cuda.is_available())"
  echo "== preflight: smoke preset on the device, training + evaluation (seconds)"
  $PY -m lab.course.train --preset smoke --corpus corpus --out runs/gpu-smoke --device auto --eval-windows 8 \
    || { echo "preflight failed; not starting the real run"; exit 3; }
  echo "== real run: preset $PRESET, $MINUTES min per model"
  $PY -m lab.course.train --preset "$PRESET" --minutes "$MINUTES" --corpus corpus --out "$RUN" --device auto
  status=$?
  if [ ! -f "$RUN/results.json" ] && [ -d "$RUN/course-gpt2" ]; then
    echo "== evaluation failed on the GPU; retrying on the CPU"
    $PY -c "from lab import course_eval; course_eval.run('$RUN', 'corpus', device='cpu')"
  fi
  exit $status
} 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}
for m in course-gpt2 course-roberta; do
  [ -d "$RUN/$m" ] && tar -C "$RUN" -czf "$OUT/$m.tar.gz" "$m"
done
for f in results.json training.json curve.png heads.png; do
  [ -f "$RUN/$f" ] && cp "$RUN/$f" "$OUT/"
done
ls -la "$OUT"
exit "$status"
