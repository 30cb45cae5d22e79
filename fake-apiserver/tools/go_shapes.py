#!/usr/bin/env python3
"""Generates `fake-apiserver/src/rules/go_encoding/shapes.rs`: for every struct the served
built-in kinds reach, the fields Go's `encoding/json` writes even when a client left them out
(no `omitempty`, or a struct value, which `omitempty` never drops) and the fields it drops when
empty (`omitempty` on a scalar, slice, map or pointer); and each field's strategic merge patch
tags (`patchStrategy`, `patchMergeKey`).

Reads the Go sources of `k8s.io/api`, `k8s.io/apimachinery` and `k8s.io/apiextensions-apiserver`
from git checkouts (the `fetch` mirrors on a developer machine):

    python3 fake-apiserver/tools/go_shapes.py \
        --api /work/.mirror/kubernetes+api/repo \
        --apimachinery /work/.mirror/kubernetes+apimachinery/repo \
        --apiextensions /work/.mirror/kubernetes+apiextensions-apiserver/repo \
        --aggregator /work/.mirror/kubernetes+kube-aggregator/repo \
        > fake-apiserver/src/rules/go_encoding/shapes.rs

(`make go-shapes` runs exactly this.) The output is committed; CI does not need the sources.
"""
import argparse
import re
import subprocess
import sys

# The served kinds: (group, kind, plural, package, Go type).
KINDS = [
    ("", "Namespace", "namespaces", "core/v1", "Namespace"),
    ("", "Pod", "pods", "core/v1", "Pod"),
    ("", "Node", "nodes", "core/v1", "Node"),
    ("", "ConfigMap", "configmaps", "core/v1", "ConfigMap"),
    ("", "Secret", "secrets", "core/v1", "Secret"),
    ("", "Event", "events", "core/v1", "Event"),
    ("", "ServiceAccount", "serviceaccounts", "core/v1", "ServiceAccount"),
    ("", "Service", "services", "core/v1", "Service"),
    ("", "Endpoints", "endpoints", "core/v1", "Endpoints"),
    ("", "PersistentVolume", "persistentvolumes", "core/v1", "PersistentVolume"),
    ("", "PersistentVolumeClaim", "persistentvolumeclaims", "core/v1", "PersistentVolumeClaim"),
    ("", "LimitRange", "limitranges", "core/v1", "LimitRange"),
    ("", "ResourceQuota", "resourcequotas", "core/v1", "ResourceQuota"),
    ("", "PodTemplate", "podtemplates", "core/v1", "PodTemplate"),
    ("", "ReplicationController", "replicationcontrollers", "core/v1", "ReplicationController"),
    ("coordination.k8s.io", "Lease", "leases", "coordination/v1", "Lease"),
    ("apps", "Deployment", "deployments", "apps/v1", "Deployment"),
    ("apps", "ReplicaSet", "replicasets", "apps/v1", "ReplicaSet"),
    ("apps", "StatefulSet", "statefulsets", "apps/v1", "StatefulSet"),
    ("apps", "DaemonSet", "daemonsets", "apps/v1", "DaemonSet"),
    ("apps", "ControllerRevision", "controllerrevisions", "apps/v1", "ControllerRevision"),
    ("autoscaling", "HorizontalPodAutoscaler", "horizontalpodautoscalers", "autoscaling/v2",
     "HorizontalPodAutoscaler"),
    ("batch", "Job", "jobs", "batch/v1", "Job"),
    ("batch", "CronJob", "cronjobs", "batch/v1", "CronJob"),
    ("policy", "PodDisruptionBudget", "poddisruptionbudgets", "policy/v1", "PodDisruptionBudget"),
    ("networking.k8s.io", "Ingress", "ingresses", "networking/v1", "Ingress"),
    ("networking.k8s.io", "IngressClass", "ingressclasses", "networking/v1", "IngressClass"),
    ("networking.k8s.io", "NetworkPolicy", "networkpolicies", "networking/v1", "NetworkPolicy"),
    ("discovery.k8s.io", "EndpointSlice", "endpointslices", "discovery/v1", "EndpointSlice"),
    ("storage.k8s.io", "StorageClass", "storageclasses", "storage/v1", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment", "volumeattachments", "storage/v1", "VolumeAttachment"),
    ("storage.k8s.io", "CSIDriver", "csidrivers", "storage/v1", "CSIDriver"),
    ("storage.k8s.io", "CSINode", "csinodes", "storage/v1", "CSINode"),
    ("storage.k8s.io", "CSIStorageCapacity", "csistoragecapacities", "storage/v1", "CSIStorageCapacity"),
    ("storage.k8s.io", "VolumeAttributesClass", "volumeattributesclasses", "storage/v1", "VolumeAttributesClass"),
    ("scheduling.k8s.io", "PriorityClass", "priorityclasses", "scheduling/v1", "PriorityClass"),
    ("node.k8s.io", "RuntimeClass", "runtimeclasses", "node/v1", "RuntimeClass"),
    ("certificates.k8s.io", "CertificateSigningRequest", "certificatesigningrequests", "certificates/v1",
     "CertificateSigningRequest"),
    ("apiregistration.k8s.io", "APIService", "apiservices", "apiregistration/v1", "APIService"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", "admissionregistration/v1",
     "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", "admissionregistration/v1",
     "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", "admissionregistration/v1",
     "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings",
     "admissionregistration/v1", "ValidatingAdmissionPolicyBinding"),
    ("rbac.authorization.k8s.io", "Role", "roles", "rbac/v1", "Role"),
    ("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", "rbac/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io", "RoleBinding", "rolebindings", "rbac/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings", "rbac/v1", "ClusterRoleBinding"),
    ("events.k8s.io", "Event", "events", "events/v1", "Event"),
    ("apiextensions.k8s.io", "CustomResourceDefinition", "customresourcedefinitions", "apiextensions/v1",
     "CustomResourceDefinition"),
]

# Package path (as imported) → (repository flag, directory in it, short name in the tables).
API_PACKAGES = ["core/v1", "apps/v1", "batch/v1", "coordination/v1", "discovery/v1", "events/v1",
                "networking/v1", "node/v1", "policy/v1", "certificates/v1", "rbac/v1", "scheduling/v1", "storage/v1",
                "admissionregistration/v1", "autoscaling/v1", "autoscaling/v2"]
PACKAGES = {"k8s.io/api/" + p: ("api", p, p) for p in API_PACKAGES}
PACKAGES["k8s.io/apimachinery/pkg/apis/meta/v1"] = ("apimachinery", "pkg/apis/meta/v1", "meta/v1")
PACKAGES["k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"] = (
    "apiextensions", "pkg/apis/apiextensions/v1", "apiextensions/v1")
PACKAGES["k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"] = (
    "aggregator", "pkg/apis/apiregistration/v1", "apiregistration/v1")
SHORT = {path: short for path, (_, _, short) in PACKAGES.items()}

# Types with their own JSON encoding: how an absent value of each is written.
SPECIAL = {
    ("meta/v1", "Time"): "Time",
    ("meta/v1", "MicroTime"): "MicroTime",
    ("meta/v1", "Duration"): "Duration",
    ("meta/v1", "FieldsV1"): "Opaque",
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): "Quantity",
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): "IntOrString",
    ("k8s.io/apimachinery/pkg/runtime", "RawExtension"): "Raw",
    ("k8s.io/apimachinery/pkg/types", "UID"): "Str",
    # A CRD's schema is free-form JSON to a reader: kept as the client wrote it.
    ("apiextensions/v1", "JSONSchemaProps"): "Opaque",
    ("apiextensions/v1", "JSON"): "Opaque",
}
SCALARS = {
    "string": "Str", "bool": "Bool", "float64": "Float", "float32": "Float",
    "int": "Int", "int32": "Int", "int64": "Int", "uint": "Int", "uint32": "Int", "uint64": "Int",
    "byte": "Int",
}


# The release the sources are read at (the conformance golden is Kubernetes 1.36).
REF = "v0.36.3"


def ref_for(repo):
    """`REF`, or the newest tag of the same minor release a mirror has (a snapshot may lag)."""
    if subprocess.run(["git", "-C", repo, "rev-parse", "--verify", "-q", REF + "^{commit}"],
                      capture_output=True).returncode == 0:
        return REF
    minor = REF.rsplit(".", 1)[0] + "."
    tags = subprocess.run(["git", "-C", repo, "tag", "--list", minor + "*"], check=True,
                          capture_output=True, text=True).stdout.split()
    tags = [t for t in tags if t[len(minor):].isdigit()]
    if not tags:
        raise SystemExit(f"{repo} has no {REF} nor any {minor}* tag")
    return max(tags, key=lambda t: int(t[len(minor):]))


def git_files(repo, directory):
    ref = ref_for(repo)
    out = subprocess.run(["git", "-C", repo, "ls-tree", "--name-only", ref, directory + "/"],
                         check=True, capture_output=True, text=True).stdout.split()
    for path in out:
        name = path.rsplit("/", 1)[-1]
        if not name.endswith(".go") or name.endswith("_test.go") or "generated" in name \
                or name.startswith("zz_"):
            continue
        yield subprocess.run(["git", "-C", repo, "show", f"{ref}:{path}"], check=True,
                             capture_output=True, text=True).stdout


class Package:
    def __init__(self, short, sources):
        self.short = short
        self.structs = {}  # name → [(field name or None, type expr, tag, imports)]
        self.named = {}  # name → (underlying type expr, imports)
        for src in sources:
            imports = parse_imports(src)
            self.parse(src, imports)

    def parse(self, src, imports):
        lines = src.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            m = re.match(r"^type (\w+) struct\s*\{\s*(\})?\s*$", line)
            if m:
                name = m.group(1)
                fields = []
                if not m.group(2):
                    i += 1
                    depth = 1
                    while i < len(lines):
                        body = lines[i].split("//", 1)[0].rstrip()
                        if re.match(r"^\}", lines[i]) and depth == 1:
                            break
                        fm = re.match(r"^\s*(?:(\w+)\s+)?([\w\.\*\[\]]+(?:\[[\w\.]+\][\w\.\*\[\]]+)?)\s+`([^`]*)`", body)
                        if fm:
                            fields.append((fm.group(1), fm.group(2), fm.group(3), imports))
                        i += 1
                self.structs[name] = fields
            else:
                m = re.match(r"^type (\w+) ([\w\.\*\[\]]+(?:\[[\w\.]+\][\w\.\*\[\]]+)?)\s*(//.*)?$", line)
                if m and m.group(2) not in ("struct", "interface"):
                    self.named[m.group(1)] = (m.group(2), imports)
            i += 1


def parse_imports(src):
    imports = {}
    block = re.search(r"^import \((.*?)^\)", src, re.S | re.M)
    entries = block.group(1).split("\n") if block else []
    single = re.findall(r'^import\s+(\w+\s+)?"([^"]+)"', src, re.M)
    for alias, path in single:
        entries.append((alias or "") + '"' + path + '"')
    for entry in entries:
        m = re.match(r'\s*(\w+)?\s*"([^"]+)"', entry)
        if not m:
            continue
        path = m.group(2)
        alias = m.group(1) or path.rsplit("/", 1)[-1]
        imports[alias] = SHORT.get(path, path)
    return imports


class Generator:
    def __init__(self, repos):
        self.repos = repos
        self.packages = {}
        self.structs = []  # (key, fields) in index order
        self.index = {}

    def package(self, short):
        if short not in self.packages:
            full = next((p for p, s in SHORT.items() if s == short), None)
            if full is None:
                return None
            repo, directory, _ = PACKAGES[full]
            self.packages[short] = Package(short, git_files(self.repos[repo], directory))
        return self.packages[short]

    def resolve(self, expr, pkg, imports):
        """A Go type expression → a Rust `Ty` expression string."""
        if expr.startswith("*"):
            inner = self.resolve(expr[1:], pkg, imports)
            return f"Ty::Ptr(&{inner})"
        if expr.startswith("[]"):
            if expr == "[]byte":
                return "Ty::Bytes"
            return f"Ty::Slice(&{self.resolve(expr[2:], pkg, imports)})"
        m = re.match(r"map\[([\w\.]+)\](.+)", expr)
        if m:
            return f"Ty::Map(&{self.resolve(m.group(2), pkg, imports)})"
        if expr in SCALARS:
            return "Ty::" + SCALARS[expr]
        if expr in ("interface{}", "any"):
            return "Ty::Opaque"
        if "." in expr:
            alias, name = expr.split(".", 1)
            target = imports.get(alias, alias)
        else:
            target, name = pkg.short, expr
        special = SPECIAL.get((target, name))
        if special:
            return "Ty::" + special
        other = self.package(target)
        if other is None:
            raise SystemExit(f"unknown package {target} for {expr}")
        if name in other.structs:
            return f"Ty::Struct({self.struct_index(other, name)})"
        if name in other.named:
            underlying, their_imports = other.named[name]
            return self.resolve(underlying, other, their_imports)
        raise SystemExit(f"unknown type {expr} in {pkg.short}")

    def struct_index(self, pkg, name):
        key = f"{pkg.short}.{name}"
        if key in self.index:
            return self.index[key]
        idx = len(self.structs)
        self.index[key] = idx
        self.structs.append((key, None))
        self.structs[idx] = (key, self.fields(pkg, name))
        return idx

    def fields(self, pkg, name):
        out = []
        for field, expr, tag, imports in pkg.structs[name]:
            m = re.search(r'json:"([^"]*)"', tag)
            if not m:
                continue
            parts = m.group(1).split(",")
            json_name, opts = parts[0], parts[1:]
            if json_name == "-":
                continue
            if field is None and (json_name == "" or "inline" in opts):
                # An embedded struct: its fields join this object.
                ty = self.resolve(expr, pkg, imports)
                inner = int(re.match(r"Ty::Struct\((\d+)\)", ty).group(1))
                out.extend(self.structs[inner][1])
                continue
            if "inline" in opts:
                ty = self.resolve(expr, pkg, imports)
                inner = int(re.match(r"Ty::Struct\((\d+)\)", ty).group(1))
                out.extend(self.structs[inner][1])
                continue
            if json_name == "":
                json_name = field
            omit = "Omit::Zero" if "omitzero" in opts else (
                "Omit::Empty" if "omitempty" in opts else "Omit::Never")
            out.append((json_name, omit, self.resolve(expr, pkg, imports), patch_tag(tag)))
        return out


def patch_tag(tag):
    """A field's `patchStrategy` / `patchMergeKey` tags as a Rust `PatchTag` (`retainKeys`, which
    only adds a directive, reads as the strategy it comes with)."""
    strategy = re.search(r'patchStrategy:"([^"]*)"', tag)
    strategies = strategy.group(1).split(",") if strategy else []
    key = re.search(r'patchMergeKey:"([^"]*)"', tag)
    if "merge" in strategies:
        return f'PatchTag::Merge(Some("{key.group(1)}"))' if key else "PatchTag::Merge(None)"
    if "replace" in strategies:
        return "PatchTag::Replace"
    return "PatchTag::None"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", required=True)
    parser.add_argument("--apimachinery", required=True)
    parser.add_argument("--apiextensions", required=True)
    parser.add_argument("--aggregator", required=True)
    args = parser.parse_args()
    gen = Generator({"api": args.api, "apimachinery": args.apimachinery,
                     "apiextensions": args.apiextensions, "aggregator": args.aggregator})
    roots = []
    for group, kind, plural, short, ty in KINDS:
        roots.append((group, kind, plural, gen.struct_index(gen.package(short), ty)))
    commits = {
        name: ref_for(repo) + " " + subprocess.run(
            ["git", "-C", repo, "log", "-1", "--format=%H %cs", ref_for(repo)], check=True,
            capture_output=True, text=True).stdout.strip()
        for name, repo in gen.repos.items()
    }
    w = sys.stdout.write
    w("//! @generated by `fake-apiserver/tools/go_shapes.py` (`make go-shapes`); do not edit.\n")
    w("//!\n//! Sources: ")
    w(", ".join(f"{name} ({commit})" for name, commit in sorted(commits.items())))
    w(".\n\nuse super::{Field, Omit, PatchTag, Struct, Ty};\n\n")
    w("/// The served built-in kinds: (group, kind, plural, index of their struct in [`STRUCTS`]).\n")
    w("pub(super) static KINDS: &[(&str, &str, &str, u16)] = &[\n")
    for group, kind, plural, idx in roots:
        w(f'    ("{group}", "{kind}", "{plural}", {idx}),\n')
    w("];\n\n")
    w("/// Every struct the kinds reach, by index; each one's fields sorted by JSON name.\n")
    w("pub(super) static STRUCTS: &[Struct] = &[\n")
    for key, fields in gen.structs:
        w(f'    Struct {{\n        name: "{key}",\n        fields: &[\n')
        for json_name, omit, ty, patch in sorted(fields, key=lambda f: f[0]):
            w(f'            Field {{ json: "{json_name}", omit: {omit}, ty: {ty}, patch: {patch} }},\n')
        w("        ],\n    },\n")
    w("];\n")


if __name__ == "__main__":
    main()
