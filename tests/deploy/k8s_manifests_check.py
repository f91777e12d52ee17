#!/usr/bin/python3
"""Checks the Kubernetes objects of deploy/k8s, as `kubectl kustomize` renders them, offline.

  k8s_manifests_check.py RENDERED.yaml OUTDIR

1. Schema: every object against the Kubernetes API's own types (Debian's python3-kubernetes,
   generated from the API's OpenAPI spec): an unknown field, a wrong type or a missing
   required field is an error. kubectl cannot do this without an API server.
2. Rules the API server or the kubelet enforce: selectors match the pod template's labels,
   volume mounts name volumes, ConfigMap volumes name ConfigMaps that exist, extended resources
   (GPU, RDMA) and huge pages have requests equal to limits, huge pages come with a memory or
   cpu request, a host-network pod resolves cluster names.
3. The fleet's own wiring: the ingest config's destinations are the builder StatefulSet's DNS
   names (one per replica, the builders' listen port), every index 0..nodes-1 is in ConfigMap
   ingest-nodes once, the builders' max_bytes holds nodes x the ingest frame and their memory
   limit buffers x max_bytes, and each pod's --metrics port is the one its annotations, ports
   and Services name.
Writes OUTDIR/ingest.yaml, OUTDIR/builder.yaml (the netdaq configs as the pods see them),
OUTDIR/node-index.sh (the init container's script) and OUTDIR/nodes/<node> (ingest-nodes), for
the shell test to run `netdaq validate` and the init step on them. Exit 1 naming every problem.
"""
import os
import re
import sys

import yaml
from kubernetes import client
from kubernetes.client import models

problems = []


def problem(where, what):
    problems.append(f"{where}: {what}")


# ---- 1. schema ------------------------------------------------------------------------------

def model_class(api_version, kind):
    version = api_version.split("/")[-1]  # v1, apps/v1 -> v1
    return getattr(models, version[0].upper() + version[1:] + kind, None)


def check_type(value, type_name, where, quantity=False):
    """Walks value against the python-client type name (str, int, list[...], dict(...), V1...)."""
    if value is None:
        return
    if type_name == "object":  # IntOrString and free-form fields
        return
    if type_name.startswith("list["):
        if not isinstance(value, list):
            problem(where, f"must be a list ({type_name}), not {type(value).__name__}")
            return
        for i, item in enumerate(value):
            check_type(item, type_name[5:-1], f"{where}[{i}]", quantity)
        return
    if type_name.startswith("dict("):
        if not isinstance(value, dict):
            problem(where, f"must be a map ({type_name}), not {type(value).__name__}")
            return
        inner = type_name[5:-1].split(", ", 1)[1]
        for k, v in value.items():
            check_type(v, inner, f"{where}.{k}", quantity)
        return
    scalar = {"str": str, "int": int, "bool": bool, "float": (int, float), "datetime": str, "date": str}
    if type_name in scalar:
        # A resource quantity may be written as a number (resource.Quantity reads both).
        ok = isinstance(value, scalar[type_name]) or (quantity and isinstance(value, (int, float)))
        if type_name == "int" and isinstance(value, bool):
            ok = False
        if not ok:
            problem(where, f"must be {type_name}, not {type(value).__name__} {value!r}")
        return
    cls = getattr(models, type_name, None)
    if cls is None:
        problem(where, f"unknown type {type_name}")
        return
    if not isinstance(value, dict):
        problem(where, f"must be a map ({type_name}), not {type(value).__name__}")
        return
    fields = {json: attr for attr, json in cls.attribute_map.items()}
    for key, v in value.items():
        if key not in fields:
            problem(f"{where}.{key}", f"unknown field of {type_name} (allowed: {', '.join(sorted(fields))})")
            continue
        attr = fields[key]
        check_type(v, cls.openapi_types[attr], f"{where}.{key}",
                   quantity=(cls is models.V1ResourceRequirements))


def check_schema(doc, where):
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not api_version or not kind:
        problem(where, "apiVersion and kind are required")
        return False
    cls = model_class(api_version, kind)
    if cls is None:
        problem(where, f"{api_version} {kind}: not a kind of the Kubernetes API")
        return False
    before = len(problems)
    check_type(doc, cls.__name__, where)
    if len(problems) == before:
        # Required fields: the client's models refuse None where the API requires a value.
        try:
            client.ApiClient()._ApiClient__deserialize(doc, cls.__name__)
        except (ValueError, TypeError) as e:
            problem(where, f"missing required field: {e}")
    return len(problems) == before


# ---- 2. API-server and kubelet rules --------------------------------------------------------

def pod_spec(doc):
    return doc.get("spec", {}).get("template", {}).get("spec", {})


def check_workload(doc, where, configmaps):
    spec = doc["spec"]
    labels = spec["template"].get("metadata", {}).get("labels", {})
    for k, v in spec["selector"].get("matchLabels", {}).items():
        if labels.get(k) != v:
            problem(where, f"spec.selector.matchLabels {k}={v} does not match the pod template's labels")
    pod = pod_spec(doc)
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for v in volumes.values():
        cm = v.get("configMap")
        if cm and cm["name"] not in configmaps:
            problem(where, f"volume {v['name']} names ConfigMap {cm['name']}, which is not in the deployment")
    if pod.get("hostNetwork") and pod.get("dnsPolicy") != "ClusterFirstWithHostNet":
        problem(where, "hostNetwork without dnsPolicy ClusterFirstWithHostNet: cluster names (builder-N.builder...) would not resolve")
    for c in pod.get("initContainers", []) + pod.get("containers", []):
        cw = f"{where} container {c['name']}"
        for m in c.get("volumeMounts", []):
            if m["name"] not in volumes:
                problem(cw, f"volumeMount {m['name']} names no volume of the pod")
        res = c.get("resources", {})
        req, lim = res.get("requests", {}), res.get("limits", {})
        for name in set(req) | set(lim):
            extended = "/" in name or name.startswith("hugepages-")
            if extended and str(req.get(name, lim.get(name))) != str(lim.get(name)):
                problem(cw, f"{name}: requests ({req.get(name)}) must equal limits ({lim.get(name)}) for an extended resource or huge pages")
        if any(n.startswith("hugepages-") for n in lim) and not ("memory" in req or "cpu" in req):
            problem(cw, "huge pages need a memory or cpu request beside them")
        for n in lim:
            if n.startswith("hugepages-") and not any(
                    v.get("emptyDir", {}).get("medium", "").startswith("HugePages") for v in volumes.values()):
                problem(cw, f"{n} requested but no emptyDir of medium HugePages to map them from")


# ---- 3. the fleet's wiring ------------------------------------------------------------------

def parse_quantity(q):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?", str(q))
    if not m:
        return None
    mult = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}[m.group(2)]
    return int(m.group(1)) * mult


def metrics_port(container):
    args = container.get("args", []) + container.get("command", [])
    for i, a in enumerate(args[:-1]):
        if a == "--metrics":
            return int(args[i + 1].rsplit(":", 1)[1])
    return None


def ingest_frame_bytes(cfg):
    r = cfg["interfaces"][0]["rx"]["reorder"][0]
    if "frame_bytes" in r:
        return int(r["frame_bytes"])
    if r.get("mode") == "roce":
        return max(int(q["slot_size"]) for q in r["roce"]["queue_pairs"])
    return int(r["payload_size"]) * int(r["packets_per_frame"])


def check_fleet(objs, outdir):
    by = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    need = [("ConfigMap", "ingest-config"), ("ConfigMap", "ingest-nodes"), ("ConfigMap", "builder-config"),
            ("DaemonSet", "ingest"), ("StatefulSet", "builder"), ("Service", "builder"), ("Service", "ingest"),
            ("Namespace", "netdaq")]
    missing = [f"{k}/{n}" for k, n in need if (k, n) not in by]
    if missing:
        problem("deployment", f"missing {', '.join(missing)}")
        return
    ns = by[("Namespace", "netdaq")]["metadata"]["name"]
    for o in objs:
        if o["kind"] != "Namespace" and o["metadata"].get("namespace") != ns:
            problem(f"{o['kind']}/{o['metadata']['name']}", f"not in namespace {ns}")
    try:
        ingest = yaml.safe_load(by[("ConfigMap", "ingest-config")]["data"]["ingest.yaml"])
        builder = yaml.safe_load(by[("ConfigMap", "builder-config")]["data"]["builder.yaml"])
    except (KeyError, yaml.YAMLError) as e:
        problem("ConfigMap ingest-config / builder-config", f"netdaq config missing or not YAML: {e}")
        return
    with open(os.path.join(outdir, "ingest.yaml"), "w") as f:
        f.write(by[("ConfigMap", "ingest-config")]["data"]["ingest.yaml"])
    with open(os.path.join(outdir, "builder.yaml"), "w") as f:
        f.write(by[("ConfigMap", "builder-config")]["data"]["builder.yaml"])
    fi, fb = ingest.get("fleet", {}), builder.get("fleet", {})

    # node indexes
    nodes_map = by[("ConfigMap", "ingest-nodes")].get("data", {})
    os.makedirs(os.path.join(outdir, "nodes"), exist_ok=True)
    for name, idx in nodes_map.items():
        with open(os.path.join(outdir, "nodes", name), "w") as f:
            f.write(idx)
    idxs = sorted(int(v) if str(v).isdigit() else -1 for v in nodes_map.values())
    n = fi.get("nodes")
    if idxs != list(range(len(idxs))) or n != len(idxs):
        problem("ConfigMap ingest-nodes", f"indexes {idxs} must be 0..{(n or 0) - 1} once each (ingest fleet.nodes = {n})")
    if fb.get("nodes") != n:
        problem("ConfigMap builder-config", f"fleet.nodes = {fb.get('nodes')}, the ingest config says {n}")

    # destinations = the StatefulSet's pods through its headless Service
    sts = by[("StatefulSet", "builder")]
    sts_svc = sts["spec"]["serviceName"]
    svc = by.get(("Service", sts_svc))
    if svc is None:
        problem("StatefulSet builder", f"serviceName {sts_svc}: no such Service")
        return
    if svc["spec"].get("clusterIP") != "None":
        problem(f"Service {sts_svc}", "must be headless (clusterIP: None) for builder-N.<service> names")
    pod_labels = sts["spec"]["template"]["metadata"]["labels"]
    if any(pod_labels.get(k) != v for k, v in svc["spec"].get("selector", {}).items()):
        problem(f"Service {sts_svc}", "selector does not select the builder pods")
    listen_port = int(str(fb.get("listen", ":0")).rsplit(":", 1)[1])
    replicas = sts["spec"].get("replicas", 1)
    dests = [d.strip() for d in str(fi.get("destinations", "")).split(",") if d.strip()]
    want = [f"{sts['metadata']['name']}-{i}.{sts_svc}.{ns}.svc.cluster.local:{listen_port}" for i in range(replicas)]
    if dests != want:
        problem("ConfigMap ingest-config", f"fleet.destinations {dests} must list the {replicas} builder replicas in order: {want}")
    bc = sts["spec"]["template"]["spec"]["containers"][0]
    if listen_port not in [p["containerPort"] for p in bc.get("ports", [])]:
        problem("StatefulSet builder", f"the builders listen on {listen_port} (fleet.listen) but no containerPort says so")
    if listen_port not in [p.get("targetPort", p["port"]) for p in svc["spec"]["ports"]]:
        problem(f"Service {sts_svc}", f"no port targets the builders' fleet.listen port {listen_port}")

    # sizes
    try:
        frame = ingest_frame_bytes(ingest)
        route = fi.get("route", "frame")
        per_node = -(-frame // replicas) if route == "bytes" else frame
        if int(fb.get("max_bytes", 0)) < n * per_node:
            problem("ConfigMap builder-config", f"fleet.max_bytes {fb.get('max_bytes')} < nodes x fragment = {n} x {per_node}")
        mem = parse_quantity(bc.get("resources", {}).get("limits", {}).get("memory", "0"))
        if mem is not None and mem < int(fb.get("buffers", 32)) * int(fb.get("max_bytes", 0)):
            problem("StatefulSet builder", f"memory limit {mem} < fleet.buffers x max_bytes")
    except (KeyError, IndexError, TypeError, ValueError) as e:
        problem("ConfigMap ingest-config", f"cannot work out the frame size: {e!r}")

    # metrics ports
    for kind, name in [("DaemonSet", "ingest"), ("StatefulSet", "builder")]:
        o = by[(kind, name)]
        c = o["spec"]["template"]["spec"]["containers"][0]
        port = metrics_port(c)
        ann = o["spec"]["template"]["metadata"].get("annotations", {}).get("prometheus.io/port")
        ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
        if port is None or str(port) != ann or ports.get("metrics") != port:
            problem(f"{kind} {name}", f"--metrics port {port}, prometheus.io/port {ann}, containerPort metrics {ports.get('metrics')}: must agree")
        s = by.get(("Service", name))
        if s and port not in [p.get("targetPort") for p in s["spec"]["ports"] if p.get("name") == "metrics"]:
            problem(f"Service {name}", f"port metrics must target {port}")

    # the init step: its output is what the ingest container runs
    ds = by[("DaemonSet", "ingest")]["spec"]["template"]["spec"]
    init = [c for c in ds.get("initContainers", []) if c["name"] == "node-index"]
    if not init:
        problem("DaemonSet ingest", "no initContainer node-index")
        return
    env = {e["name"]: e.get("value") for e in init[0].get("env", [])}
    if env.get("OUT") not in ds["containers"][0].get("args", []):
        problem("DaemonSet ingest", f"the ingest container does not run the init step's output {env.get('OUT')}")
    with open(os.path.join(outdir, "node-index.sh"), "w") as f:
        f.write(init[0]["command"][-1])


def main():
    rendered, outdir = sys.argv[1], sys.argv[2]
    with open(rendered) as f:
        objs = [d for d in yaml.safe_load_all(f) if d]
    configmaps = {o["metadata"]["name"] for o in objs if o.get("kind") == "ConfigMap"}
    good = []
    for i, o in enumerate(objs):
        where = f"{o.get('kind')}/{o.get('metadata', {}).get('name')} (object {i + 1})"
        if check_schema(o, where):
            good.append(o)
            if o["kind"] in ("DaemonSet", "StatefulSet", "Deployment"):
                check_workload(o, where, configmaps)
    if len(good) == len(objs):
        check_fleet(objs, outdir)
    for p in problems:
        print(f"k8s check: {p}")
    print(f"k8s check: {len(objs)} objects, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
