package audit

import (
	"encoding/json"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reports: the results as openreports.io/v1alpha1 objects. One Report per script and
// namespace (a ClusterReport per script for cluster-scoped objects): a namespace's owners
// read their own reports, a change of one object rewrites one report of one script, and a
// script's results can be removed without touching another's. A group of more than
// MaxResults is split into buckets by a hash of each object's UID, so that one object
// coming or going rewrites one report, not every one after it.

// GVRs of the report resources.
var (
	ReportGVR        = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	ClusterReportGVR = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}
)

const (
	// MaxResults bounds the results of one report object; with messages cut at maxMessage,
	// a report stays under 1 MiB, well below the API server's 1.5 MiB request limit.
	MaxResults = 500
	maxMessage = 1024
	// ManagedBy is the label value of the reports the runner writes (app.kubernetes.io/managed-by).
	ManagedBy = "jsinformer"
	// ScriptLabel names the script a report holds the results of.
	ScriptLabel = "jsinformer.dev/script"
	source      = "jsinformer"
)

// ReportID names one report object: its namespace ("" for a ClusterReport) and name.
type ReportID struct{ Namespace, Name string }

// GVR is the resource of the report id names.
func (id ReportID) GVR() schema.GroupVersionResource {
	if id.Namespace == "" {
		return ClusterReportGVR
	}
	return ReportGVR
}

// Build groups results (sorted, as Results.Snapshot returns them) into report objects.
func Build(results []Result) map[ReportID]*unstructured.Unstructured {
	groups := map[ReportID][]Result{}
	for _, r := range results {
		id := groupOf(r.Script, r.Subject.Namespace)
		groups[id] = append(groups[id], r)
	}
	out := map[ReportID]*unstructured.Unstructured{}
	for id, group := range groups {
		buildGroup(out, id, group, bucketCount(len(group)))
	}
	return out
}

// buildGroup adds to out the reports of group (sorted) under its base id, split into buckets
// parts: those of a part without results are left out. group may hold only some parts'
// results, all of each, with buckets the count of the whole group's.
func buildGroup(out map[ReportID]*unstructured.Unstructured, id ReportID, group []Result, buckets int) {
	for i, part := range split(group, buckets) {
		if len(part) == 0 {
			continue
		}
		pid := ReportID{Namespace: id.Namespace, Name: partName(id.Name, i, buckets)}
		out[pid] = reportObject(pid, part)
	}
}

// partName is the name of part i of a group named base split into buckets parts.
func partName(base string, i, buckets int) string {
	if buckets == 1 {
		return base
	}
	return base + "-" + strconv.Itoa(i)
}

// bucketCount is a power of two giving each bucket about half of MaxResults at most, so that
// uneven hashing stays under it.
func bucketCount(n int) int {
	b := 1
	for n > b*MaxResults/2 && b > 0 && n > MaxResults {
		b *= 2
	}
	return b
}

func split(group []Result, buckets int) [][]Result {
	parts := make([][]Result, buckets)
	for _, r := range group {
		i := int(partHash(r) % uint32(buckets))
		parts[i] = append(parts[i], r)
	}
	return parts
}

// partHash places r in a part of its group: its index is this modulo the parts.
func partHash(r Result) uint32 {
	h := fnv.New32a()
	h.Write([]byte(r.Subject.UID + "/" + r.Subject.Name))
	return h.Sum32()
}

var notName = regexp.MustCompile(`[^a-z0-9-]+`)

// reportName is "jsinformer-SCRIPT", with "-SUFFIX" for a split group.
func reportName(script, suffix string) string {
	name := "jsinformer-" + strings.Trim(notName.ReplaceAllString(strings.ToLower(script), "-"), "-")
	if suffix != "" {
		name += "-" + suffix
	}
	return name
}

func reportObject(id ReportID, results []Result) *unstructured.Unstructured {
	kind := "Report"
	if id.Namespace == "" {
		kind = "ClusterReport"
	}
	summary := map[string]any{}
	for _, o := range Outcomes {
		summary[o] = int64(0)
	}
	items := make([]any, 0, len(results))
	for _, r := range results {
		summary[r.Result] = summary[r.Result].(int64) + 1
		items = append(items, resultObject(r))
	}
	meta := map[string]any{"name": id.Name, "labels": map[string]any{
		"app.kubernetes.io/managed-by": ManagedBy, ScriptLabel: ScriptLabelValue(results[0].Script)}}
	if id.Namespace != "" {
		meta["namespace"] = id.Namespace
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "openreports.io/v1alpha1", "kind": kind, "metadata": meta,
		"source": source, "summary": summary, "results": items,
	}}
}

func resultObject(r Result) map[string]any {
	msg := r.Message
	if len(msg) > maxMessage {
		msg = msg[:maxMessage-3] + "..."
	}
	subject := map[string]any{"apiVersion": r.Subject.APIVersion, "kind": r.Subject.Kind, "name": r.Subject.Name, "uid": r.Subject.UID}
	if r.Subject.Namespace != "" {
		subject["namespace"] = r.Subject.Namespace
	}
	return map[string]any{"source": source, "policy": r.Script, "result": r.Result, "message": msg,
		"resources": []any{subject}, "timestamp": map[string]any{"seconds": r.Time.Unix(), "nanos": int64(0)}}
}

// Content is what a report says, its timestamps and metadata aside: two reports with equal
// Content need no write.
func Content(obj *unstructured.Unstructured) string {
	results, _, _ := unstructured.NestedSlice(obj.Object, "results")
	stripped := make([]any, len(results))
	for i, r := range results {
		if m, ok := r.(map[string]any); ok {
			c := make(map[string]any, len(m))
			for k, v := range m {
				if k != "timestamp" {
					c[k] = v
				}
			}
			stripped[i] = c
		}
	}
	summary, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "summary")
	b, _ := json.Marshal(map[string]any{"results": stripped, "summary": summary}) // numbers read back as int64 or float64 print alike
	return string(b)
}

// ReportKey is the sharding key of the reports of a script (its ScriptLabel value) in a
// namespace ("" for its ClusterReports): "report:SCRIPT#NAMESPACE". Under --sharded the
// replica owning it alone writes and deletes them; a split group's parts share it, so that
// one replica renames them when the group grows or shrinks.
func ReportKey(scriptLabel, namespace string) string {
	return "report:" + scriptLabel + "#" + namespace
}

// ScriptLabelValue is the value of ScriptLabel on the reports of script.
func ScriptLabelValue(script string) string {
	return notName.ReplaceAllString(strings.ToLower(script), "-")
}
