package typegen

import (
	"fmt"
	"sync"

	"k8s.io/client-go/openapi"
)

// ClusterSource reads documents from a cluster's /openapi/v3, as discovery's OpenAPIV3() serves
// them. The list of paths is read once, on first use.
func ClusterSource(client openapi.Client) Source {
	var (
		once  sync.Once
		paths map[string]openapi.GroupVersion
		err   error
	)
	return func(path string) ([]byte, error) {
		once.Do(func() { paths, err = client.Paths() })
		if err != nil {
			return nil, fmt.Errorf("list /openapi/v3: %w", err)
		}
		gv, ok := paths[path]
		if !ok {
			return nil, fmt.Errorf("the server publishes no /openapi/v3/%s "+
				"(the schema of a CustomResourceDefinition is published a few seconds after it is created)", path)
		}
		return gv.Schema("application/json")
	}
}
