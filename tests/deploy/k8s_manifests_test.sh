#!/usr/bin/env bash
# The Kubernetes deployment (deploy/k8s) checked offline, with no API server and no kubeconfig,
# then deliberately broken copies of it, each of which must fail for its own reason.
#   k8s_manifests_test.sh manifests SOURCE_DIR PYTHON            (ctest fleet_k8s_manifests)
#   k8s_manifests_test.sh configs SOURCE_DIR PYTHON NETDAQ       (ctest fleet_k8s_netdaq_configs)
# manifests: `kubectl kustomize` renders it (what `kubectl apply -k` would send) and
#   `kubectl annotate --local` decodes every object: the two things kubectl does without a
#   server, alike in Debian 12's kubectl 1.20 and newer ones (`apply --dry-run=client` and
#   `create --dry-run=client` ask the server for its API groups first, so they cannot run here).
#   Then k8s_manifests_check.py checks each object against the API's types (python3-kubernetes)
#   and the fleet's wiring.
# configs: the netdaq configs in the ConfigMaps (and examples/fleet) pass `netdaq validate`, and
#   the ingest pods' init step gives each Kubernetes node its own fleet.node.
# Outside CI a missing tool skips (exit 77); under CI=true it fails.
set -uo pipefail
mode=$1 src=$2 python=$3 netdaq=${4:-}
. "$src/scripts/lib/ci.sh"

missing() {  # what, package
  if netdaq_in_ci; then echo "FAIL: $1 is missing (apt-get install $2); CI=true: this test must not skip"; exit 1; fi
  echo "SKIP: $1 is missing (apt-get install $2)"; exit 77
}
command -v kubectl >/dev/null || missing kubectl kubernetes-client
"$python" -c 'import kubernetes, yaml' 2>/dev/null || missing "Python module kubernetes" python3-kubernetes
if [ "$mode" = configs ] && [ ! -x "$netdaq" ]; then echo "FAIL: no netdaq binary at '$netdaq'"; exit 1; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# No cluster: an empty kubeconfig and a home of its own, so nothing here reads or writes ~/.kube.
: > "$work/kubeconfig"
mkdir -p "$work/home"
export KUBECONFIG="$work/kubeconfig" HOME="$work/home"
kubectl version --client 2>&1 | head -1

# check DIR OUT: every stage of $mode on the manifests in DIR; its messages go to stdout.
check() {
  local dir=$1 out=$2 rc=0 objects names
  mkdir -p "$out"
  timeout 60 kubectl kustomize "$dir" > "$out/rendered.yaml" || { echo "kubectl kustomize failed"; return 1; }
  objects=$(grep -c '^kind:' "$out/rendered.yaml")
  names=$(timeout 60 kubectl annotate --local -f "$out/rendered.yaml" netdaq.io/checked=true -o name) ||
    { echo "kubectl annotate --local failed"; return 1; }
  if [ "$(wc -l <<<"$names")" != "$objects" ]; then
    echo "kubectl decoded $(wc -l <<<"$names") of $objects objects"; return 1
  fi
  "$python" "$src/tests/deploy/k8s_manifests_check.py" "$out/rendered.yaml" "$out" || rc=1
  if [ "$mode" = configs ]; then
    "$netdaq" validate "$out/ingest.yaml" "$out/builder.yaml" || rc=1
    # The init container's own script, run as the kubelet would on each node of ingest-nodes,
    # with the builders' cluster names (which do not resolve here) replaced by this host's.
    local bin node idx
    bin=$(dirname "$netdaq")
    sed 's/builder-[0-9]*\.builder\.netdaq\.svc\.cluster\.local:/localhost:/g' "$out/ingest.yaml" > "$out/ingest-here.yaml"
    for node in "$out"/nodes/*; do
      idx=$(cat "$node")
      if ! PATH="$bin:$PATH" NODE_NAME=$(basename "$node") TEMPLATE="$out/ingest-here.yaml" NODES_DIR="$out/nodes" \
           OUT="$out/ingest-$idx.yaml" WAIT_S=10 sh "$out/node-index.sh"; then
        echo "init step failed for node $(basename "$node")"; rc=1
      elif ! grep -Eq "^  node: $idx( |\$)" "$out/ingest-$idx.yaml"; then
        echo "init step for node $(basename "$node") did not write fleet.node $idx"; rc=1
      fi
    done
    # A node missing from ingest-nodes must not start.
    if PATH="$bin:$PATH" NODE_NAME=not-listed TEMPLATE="$out/ingest.yaml" NODES_DIR="$out/nodes" \
       OUT="$out/unlisted.yaml" WAIT_S=10 sh "$out/node-index.sh" 2>&1; then
      echo "init step accepted a node missing from ingest-nodes"; rc=1
    fi
    # Builders whose names never resolve: the wait gives up after WAIT_S, saying so.
    node=$(ls "$out/nodes" | head -1)
    local said
    if said=$(PATH="$bin:$PATH" NODE_NAME=$node TEMPLATE="$out/ingest.yaml" NODES_DIR="$out/nodes" \
              OUT="$out/unresolved.yaml" WAIT_S=3 sh "$out/node-index.sh" 2>&1); then
      echo "init step went on although the builders' names do not resolve"; rc=1
    elif ! grep 'does not resolve after 3s' <<<"$said"; then
      echo "init step did not say that the builders' names do not resolve: $said"; rc=1
    fi
  fi
  return $rc
}

failed=0
echo "== deploy/k8s ($mode)"
if check "$src/deploy/k8s" "$work/good"; then
  echo "ok   deploy/k8s passes"
else
  echo "FAIL deploy/k8s"; failed=1
fi
if [ "$mode" = configs ]; then
  for f in "$src"/examples/fleet/*.yaml; do "$netdaq" validate "$f" || failed=1; done
fi

# broken FILE SED_EXPR EXPECTED: a copy of deploy/k8s with one change must fail, saying EXPECTED.
broken() {
  local file=$1 expr=$2 expected=$3 dir log
  dir="$work/broken$((++n))"
  cp -r "$src/deploy/k8s" "$dir"
  sed -i -e "$expr" "$dir/$file"
  if cmp -s "$dir/$file" "$src/deploy/k8s/$file"; then echo "FAIL broken copy $n: '$expr' changed nothing in $file"; failed=1; return; fi
  log=$(check "$dir" "$dir.out" 2>&1)
  if [ $? -eq 0 ]; then
    echo "FAIL broken copy $n ($file: $expr) passed"; failed=1
  elif ! grep -qiF -- "$expected" <<<"$log"; then
    echo "FAIL broken copy $n ($file: $expr) failed, but not saying '$expected':"; sed 's/^/     /' <<<"$log"; failed=1
  else
    echo "ok   broken copy $n fails: $file: $expr -> $(grep -iF -m1 -- "$expected" <<<"$log")"
  fi
}
n=0
if [ "$mode" = manifests ]; then
  broken builder-statefulset.yaml 's/^      containers:/      contaners:/' "unknown field"
  broken builder-statefulset.yaml 's/replicas: 2/replicas: two/' "must be int"
  broken builder-statefulset.yaml 's/replicas: 2/replicas: 3/' "fleet.destinations"
  broken builder-statefulset.yaml 's/prometheus.io\/port: "9464"/prometheus.io\/port: "9465"/' "must agree"
  broken ingest-daemonset.yaml '0,/hugepages-2Mi: 1Gi/s//hugepages-2Mi: 2Gi/' "must equal limits"
  broken ingest-daemonset.yaml 's/dnsPolicy: ClusterFirstWithHostNet/dnsPolicy: ClusterFirst/' "ClusterFirstWithHostNet"
  broken ingest-daemonset.yaml 's/^      containers:/      containers: [/' "yaml"
  broken ingest-daemonset.yaml 's/mountPath: \/run\/netdaq, readOnly/mountPath: \/run\/netdaq, readonly/' "unknown field"
  broken ingest-config.yaml '/daq-node-c: "2"/d' "indexes"
  broken ingest-config.yaml 's/^    run:$/    run: [/' "not YAML"
  broken builder-config.yaml 's/max_bytes: 12582912/max_bytes: 8388608/' "max_bytes"
  broken namespace.yaml 's/^apiVersion: v1$//' "apiVersion"
  broken kustomization.yaml 's/builder-service.yaml/builder-svc.yaml/' "builder-svc.yaml"
else
  broken ingest-config.yaml 's/mode: roce/mode: rocee/' "must be one of"
  broken ingest-config.yaml 's/route: frame /route: frames /' "route"
  broken builder-config.yaml 's/timeout_ms: 500 /timeout_ms: -1 /' "timeout_ms"
  broken ingest-daemonset.yaml 's/\^  node: \[0-9\]\[0-9\]\*/^  node: [a-z][a-z]*/' "no '  node:' line"
  broken ingest-config.yaml 's/daq-node-c: "2"/daq-node-c: "3"/' "must be below fleet.nodes"
fi
echo "k8s manifests ($mode): $n broken copies tried"
[ "$failed" = 0 ] && echo "every check passed"
exit $failed
