package check

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/client-go/discovery"

	"github.com/jsinformer/jsinformer/internal/editdistance"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// unknownResource is the problem of a manifest whose apiVersion and kind the cluster does not
// serve, with the nearest kind it serves when one is close.
func unknownResource(disc discovery.DiscoveryInterface, apiVersion, kind string) string {
	msg := fmt.Sprintf("unknown resource: %s %s is not served (the built-in resources of Kubernetes %s, and the CRDs of the input)",
		apiVersion, kind, memcluster.KubernetesVersion)
	if near := nearestKind(disc, apiVersion, kind); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return msg
}

// nearestKind is the served "apiVersion Kind" closest to apiVersion and kind: the same kind
// in another version first, else a kind at most a third of its length away (two edits for
// short ones), in the same version by preference; "" when none is that close.
func nearestKind(disc discovery.DiscoveryInterface, apiVersion, kind string) string {
	_, lists, _ := disc.ServerGroupsAndResources() // partial lists still help
	sort.Slice(lists, func(i, j int) bool { return lists[i].GroupVersion < lists[j].GroupVersion })
	want := strings.ToLower(kind)
	limit := max(2, len(kind)/3)
	best, bestScore := "", 2*limit+2
	for _, l := range lists {
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			d := editdistance.Levenshtein(want, strings.ToLower(r.Kind))
			if d > limit {
				continue
			}
			score := 2 * d
			if l.GroupVersion != apiVersion {
				score++
			}
			if score < bestScore {
				best, bestScore = l.GroupVersion+" "+r.Kind, score
			}
		}
	}
	return best
}
