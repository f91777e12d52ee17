#!/usr/bin/env bash
# deploy/prometheus checked with Debian's promtool: the three scrape configs (static targets,
# file_sd, the cluster's DNS SRV) and the recording rules they load, then the rules' unit test
# (fleet totals worked out by hand from 3 ingest and 2 builder processes' counters), then
# deliberately broken copies, each of which must fail for its own reason.
#   prometheus_config_test.sh SOURCE_DIR          (ctest fleet_prometheus_config)
# Outside CI a missing promtool skips (exit 77); under CI=true it fails.
set -uo pipefail
src=$1
. "$src/scripts/lib/ci.sh"
if ! command -v promtool >/dev/null; then
  netdaq_in_ci && { echo "FAIL: promtool is missing (apt-get install prometheus); CI=true: this test must not skip"; exit 1; }
  echo "SKIP: promtool is missing (apt-get install prometheus)"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
promtool --version 2>&1 | head -1

# check DIR: every config, the rules and their unit test in DIR.
check() {
  local dir=$1 rc=0 c
  for c in fleet.yml fleet-file-sd.yml kubernetes.yml; do
    timeout 60 promtool check config "$dir/$c" || rc=1
  done
  timeout 60 promtool check rules "$dir/fleet-rules.yml" || rc=1
  (cd "$dir" && timeout 60 promtool test rules fleet-rules.test.yml) || rc=1
  return $rc
}

failed=0
if check "$src/deploy/prometheus"; then echo "ok   deploy/prometheus passes"; else echo "FAIL deploy/prometheus"; failed=1; fi

n=0
# broken FILE SED_EXPR EXPECTED: a copy of deploy/prometheus with one change must fail, saying EXPECTED.
broken() {
  local file=$1 expr=$2 expected=$3 dir log
  dir="$work/broken$((++n))"
  cp -r "$src/deploy/prometheus" "$dir"
  sed -i -e "$expr" "$dir/$file"
  if cmp -s "$dir/$file" "$src/deploy/prometheus/$file"; then echo "FAIL broken copy $n: '$expr' changed nothing in $file"; failed=1; return; fi
  log=$(check "$dir" 2>&1)
  if [ $? -eq 0 ]; then
    echo "FAIL broken copy $n ($file: $expr) passed"; failed=1
  elif ! grep -qiF -- "$expected" <<<"$log"; then
    echo "FAIL broken copy $n ($file: $expr) failed, but not saying '$expected':"; sed 's/^/     /' <<<"$log"; failed=1
  else
    echo "ok   broken copy $n fails: $file: $expr -> $(grep -iF -m1 -- "$expected" <<<"$log" | sed 's/^ *//')"
  fi
}
broken fleet-rules.yml 's/expr: sum(netdaq_fleet_sink_acked_total)/expr: sum(netdaq_fleet_sink_acked_total/' "parse error"
# A total that leaves out one fate: the unit test's hand-worked sums catch it.
broken fleet-rules.yml 's/fleet:netdaq_fleet_sink_peer_down:sum + fleet:netdaq_fleet_sink_in_flight_lost:sum/fleet:netdaq_fleet_sink_peer_down:sum/' "fleet:netdaq_fleet_sink_lost:sum"
broken fleet-rules.yml 's/sum by (node) (netdaq_fleet_builder_fragments_total)/sum by (instance) (netdaq_fleet_builder_fragments_total)/' "fleet_node:netdaq_fleet_builder_fragments:sum"
broken fleet.yml 's/scrape_timeout: 4s/scrape_timeout: 6s/' "scrape timeout greater than scrape interval"
broken fleet.yml 's/metrics_path: \/metrics/metric_path: \/metrics/' "field metric_path not found"
broken fleet-targets.yml 's/targets: \["127.0.0.1:9466"\]/target: ["127.0.0.1:9466"]/' "field target not found"
broken kubernetes.yml 's/type: SRV/type: SRVX/' "invalid DNS-SD records type"
echo "prometheus config: $n broken copies tried"
[ "$failed" = 0 ] && echo "every check passed"
exit $failed
