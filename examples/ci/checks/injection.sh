#!/usr/bin/env bash
# injection.sh FILE: a stand-in prompt-injection check (docs/CI.md): fails
# when a line of FILE tries to override the model's instructions.
set -euo pipefail
! grep -qiE 'ignore (all )?previous instructions' "$1"
