// Package unstructuredjson decodes Kubernetes JSON into the map[string]any trees of
// unstructured.Unstructured, fast, and with exactly the result apimachinery's unstructured
// JSON decoder gives (sigs.k8s.io/json with PreserveInts, as the dynamic client uses it):
//
//   - an integer literal (no '.', no exponent) that fits int64 is an int64; every other
//     number is the float64 strconv.ParseFloat gives ("1e3", "1.0", "-0.0",
//     "99999999999999999999"); a number out of float64 range is an error;
//   - strings are unquoted as encoding/json does: invalid UTF-8 and unpaired surrogate escapes
//     become U+FFFD, control characters and bad escapes are errors;
//   - objects are map[string]any, arrays []any (non-nil, also when empty), null is nil;
//   - a key repeated in an object keeps its last value;
//   - nesting deeper than 10,000 levels is an error, as in encoding/json's scanner.
//
// With Options.DropManagedFields the decoder skips metadata.managedFields of every object it
// returns (the items of a list, a single object) while decoding: the field is validated but
// never allocated. The result equals apimachinery's with that key deleted afterwards.
//
// The decoder is a fast path, not a replacement for the reference: it returns an error for
// anything it does not decode exactly as the reference would (invalid JSON, and shapes the
// reference treats specially, such as a top-level "Kind" key or a non-string "kind"). Callers
// fall back to apimachinery's decoder on error, which then gives the reference's own result
// or error. The differential and fuzz tests hold the package to that: whenever it succeeds,
// apimachinery succeeds with an equal result.
//
// Decoding never retains the input: every string is a copy, so callers may reuse the buffer.
// Equal strings may share one copy: object keys come from a per-decoder table and short
// string values from a per-decoder cache of boxed values (strings are immutable, so the
// sharing cannot be observed; it saves ~10 % of a decoded Deployment's memory and half of
// the allocations). Equal small subtrees, maps and arrays, are shared too (share.go), within
// one result and between the results of one pooled decoder: results must be treated as
// immutable, as informer caches are (it halves the memory of decoded Deployments). An
// object's own maps, the object and its metadata, are never shared.
//
// ReadList decodes a list from a reader, item by item as the bytes arrive, with List's
// results and errors, holding only the value being decoded.
// Options.Keep filters a list's items as they are decoded (a partitioned informer drops the
// objects of other replicas there), so a refused item is never held.
// All functions are safe for concurrent use; each call has its own decoder state (pooled).
// The decoder is plain Go (no unsafe, no assembly, no JIT) and behaves the same on every
// platform Go supports.
package unstructuredjson
