"""CEL device selectors, evaluated as kube-scheduler v1.35 and v1.36 evaluate them
(upstream keeps them as k8s.io/dynamic-resource-allocation/cel, next to the
allocator; so does kschedx).

Upstream compiles selectors with cel-go in the Kubernetes "stored
expressions" environment plus a declared `device` variable
(k8s.io/dynamic-resource-allocation/cel): `device.driver` (string),
`device.attributes[domain][id]` (any) and `device.capacity[domain][id]`
(Quantity). With DRAConsumableCapacity (off in v1.35, on in v1.36) the
device also has `allowMultipleAllocations` (bool); without it an expression
using that field does not compile. Looking up an unknown domain
yields an empty map, so `device.attributes["other"].x` fails with
"no such key: x" rather than on the domain.

Evaluation uses cel-python (celpy), a pure-Python CEL interpreter, with an
adapter for what it lacks compared with cel-go in this environment:
- a static check before evaluation (celpy has no type checker), which
  reports as compile errors what cel-go's checker rejects here: syntax
  errors, unknown identifiers and functions, unknown `device` fields,
  mismatched operand types of known static type, a non-bool result;
- the Kubernetes quantity and semver libraries and the strings extension;
- cel-go's heterogeneous runtime equality for `==`/`!=`;
- `cel.bind(v, init, body)`, rewritten to `[init].map(v, body)[0]`;
- cel-go's wording of runtime errors ("no such key: x", "no such overload").
Results are cached per (expression, device): selectors and devices do not
change during a run, so each pair is evaluated once however many nodes,
requests and pods ask.

Modules: compile (CompiledSelector, compile_selector, CelDevice: the entry
points), checker (the static check), library (values and the Kubernetes
libraries), fast (the native fast path), semver (versions as DRA parses
them). Nothing is imported here: celpy costs ~150 ms to import, paid only by
runs with device selectors (`from .cel import compile`).
"""
