package unstructuredjson_test

import (
	"testing"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// TestListContinue reads the continue token of list documents without their items, and
// declines what it cannot read before them.
func TestListContinue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		doc   string
		token string
		ok    bool
	}{
		{"as the apiserver writes it", `{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"9","continue":"abc="},"items":[{]}`, "abc=", true},
		{"last page", `{"kind":"L","metadata":{"resourceVersion":"9"},"items":[]}`, "", true},
		{"empty token", `{"kind":"L","metadata":{"continue":""},"items":null}`, "", true},
		{"spaces and escapes", " {\n \"metadata\" : { \"continue\" : \"a\\u0062\\/c\" } ,\t\"items\" : [] } ", "ab/c", true},
		{"repeated metadata: the last before items", `{"metadata":{"continue":"a"},"metadata":{"continue":"b"},"items":[]}`, "b", true},
		{"metadata not an object", `{"metadata":"x","items":[]}`, "", true},
		{"non-string token", `{"metadata":{"continue":5},"items":[]}`, "", true},
		{"other members skipped", `{"a":[1,{"b":"}"}],"metadata":{"continue":"t","x":{"continue":"no"}},"items":[]}`, "t", true},
		{"items first", `{"items":[],"metadata":{"continue":"t"}}`, "", true},
		{"no items", `{"kind":"L","metadata":{"continue":"t"}}`, "", false},
		{"not an object", `["metadata"]`, "", false},
		{"empty", ``, "", false},
		{"invalid before items", `{"metadata":{"continue":"t",},"items":[]}`, "", false},
		{"invalid member", `{"kind":tru,"items":[]}`, "", false},
		{"missing colon", `{"metadata" {"continue":"t"},"items":[]}`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			token, ok := unstructuredjson.ListContinue([]byte(tc.doc))
			if token != tc.token || ok != tc.ok {
				t.Fatalf("ListContinue = %q, %t; want %q, %t", token, ok, tc.token, tc.ok)
			}
		})
	}
}

// TestListContinueAgreesWithList: on a page as the apiserver writes it (kind, apiVersion and
// metadata before the items), the token is the one the decoded list carries.
func TestListContinueAgreesWithList(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"9",` +
		`"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OSwic3RhcnQiOiJ4XHUwMDAwIn0"},"items":[` +
		string(deployments.JSON(0)) + "," + string(deployments.JSON(1)) + "]}")
	list, err := unstructuredjson.List(doc, unstructuredjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	token, ok := unstructuredjson.ListContinue(doc)
	if !ok || token == "" || token != list.GetContinue() || len(list.Items) != 2 {
		t.Fatalf("ListContinue = %q, %t; the list of %d items says %q", token, ok, len(list.Items), list.GetContinue())
	}
}
