// Package check is `runner check`: it runs a scripts folder's validate and mutate over
// manifests, as kube-apiserver would call their webhooks for a CREATE of each, before anything
// reaches a cluster (a pull request's manifests, `kustomize build` output).
//
// Contract:
//   - Input (input.go): YAML or JSON files, several documents each ("---"), "-" for stdin,
//     folders read recursively (*.yaml, *.yml, *.json, hidden folders left out), in the order
//     given, each folder's files in name order. Documents are numbered from 1 per file,
//     empty ones (nothing or comments only) not counted; a List's items are its document's,
//     numbered from 1 as items. A document that is not valid YAML or JSON, is not an object, or
//     lacks apiVersion or kind is an input error naming the file and the document; so is an
//     input without any document (an empty pipe must not pass).
//   - Cluster (run.go): the in-memory cluster and engine of `runner test` (internal/memcluster,
//     offline.Harness), with the folder's admission scripts loaded (plugins defining validate
//     or mutate, in name order). Before they load, the cluster gets the CRDs of the input (a
//     script may watch their resources) and the namespaces the input's objects name without
//     declaring them. Each document is then created, in order, through the cluster's
//     admission, so the scripts' caches and indexes hold every object admitted before it; a
//     denied object is not stored. An object the cluster already holds (a CRD or namespace
//     created beforehand, or one of the namespaces of a fresh cluster) is admitted without
//     being stored again. The scripts' handlers run too, dry-run: their writes change nothing.
//     A script's admission.namespaceSelector matches the labels of the input's Namespace
//     documents (admitted before the objects in them, as kubectl applies them); a namespace
//     the input names without declaring it has no label but its name, so a script selecting
//     namespaces by another label is not called for its objects.
//   - Results (report.go): for each object, one result per script whose webhook was called:
//     pass, deny, warn, mutate (with the JSON Patch), audit (what a script in admission mode
//     audit would have denied or patched) or error (the script threw or timed out). Input
//     errors, an unknown resource (with the nearest served kind), a duplicate object and a
//     script that does not load (with its file:line:col) are Problems.
//   - Exit code (Report.ExitCode): 2 on any problem or script error, else 1 when a script
//     denied in mode enforce, else 0. Mode warn reports denials as warnings and does not fail
//     on them; mode audit lists every result, passes included, and does not fail on denials
//     either. The mode changes the reporting only: the run is the same.
//   - Output (text.go, json.go, junit.go): text for people, one JSON document, or JUnit XML.
package check
