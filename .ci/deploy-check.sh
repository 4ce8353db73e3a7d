#!/usr/bin/env bash
# The deployment files, checked by the tools operators run them with:
# systemd's own verifier on the units (any warning fails), and the
# Kubernetes manifests against the API's schemas (strict: an unknown field
# fails). `kubectl apply --dry-run=client` needs an API server even in
# client mode, so it runs only when one answers.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/txmap}"
[ -x "$bin" ] || cargo build --locked --bin txmap

echo "-- systemd units"
if ! command -v systemd-analyze >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for unit in deploy/systemd/*; do
    sed "s|/usr/local/bin/txmap|$(realpath "$bin")|g" "$unit" > "$work/$(basename "$unit")"
done
out=$(cd "$work" && systemd-analyze verify --man=no ./*.service ./*.timer 2>&1 || true)
if [ -n "$out" ]; then
    echo "$out"
    exit 1
fi
# Exposure on systemd's scale of 10, times 10: at most 3.0.
(cd "$work" && systemd-analyze security --offline=true --threshold=30 ./txmap.service | tail -1)

echo "-- Kubernetes manifests"
if ! command -v kubernetes-validate >/dev/null; then
    python3 -m pip install -q kubernetes-validate==1.37.0 2>/dev/null \
        || python3 -m pip install -q kubernetes-validate
fi
kubernetes-validate --strict --quiet -k 1.32.0 deploy/k8s/*.yaml
if command -v kubectl >/dev/null && kubectl version --request-timeout=2s >/dev/null 2>&1; then
    kubectl apply --dry-run=client -f deploy/k8s/
else
    echo "(no Kubernetes API server answers: kubectl apply --dry-run=client not run)"
fi
echo "deploy files: ok"
