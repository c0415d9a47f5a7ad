package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// Stdin is the file name of the documents read from standard input ("-").
const Stdin = "stdin"

// Document is one manifest of the input, or why a document could not be read.
type Document struct {
	File  string // the path as given (under a folder given, joined to it), or Stdin
	Index int    // 1-based among the file's non-empty documents
	Item  int    // 1-based position in a List document's items; 0 otherwise
	// Object is the manifest; nil when Err is set.
	Object *unstructured.Unstructured
	Err    error
}

// Where names the document: "deploy.yaml, document 2", with ", item 3" in a List.
func (d Document) Where() string {
	s := fmt.Sprintf("%s, document %d", d.File, d.Index)
	if d.Item > 0 {
		s += fmt.Sprintf(", item %d", d.Item)
	}
	return s
}

// Read reads the documents of paths in order: files, folders (recursively, *.yaml, *.yml and
// *.json in name order, hidden folders left out) and "-" for stdin. It fails on a path that
// cannot be read or a folder without manifests; a document that is not a manifest is a
// Document with Err.
func Read(paths []string, stdin io.Reader) ([]Document, error) {
	var out []Document
	stdinRead := false
	for _, p := range paths {
		if p == "-" {
			if stdinRead {
				return nil, errors.New("read manifests: - (stdin) is given twice")
			}
			stdinRead = true
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("read manifests from stdin: %w", err)
			}
			out = append(out, Parse(Stdin, data)...)
			continue
		}
		files, err := manifestFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("read manifests: %w", err)
			}
			out = append(out, Parse(f, data)...)
		}
	}
	return out, nil
}

// manifestFiles is path itself when it is a file, else the manifests under the folder.
func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != path && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && isManifest(d.Name()):
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read manifests: no *.yaml, *.yml or *.json file under %s", path)
	}
	return files, nil
}

func isManifest(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Parse splits one file's content into its documents: a JSON stream when it starts with {
// or [, else YAML documents separated by "---" lines.
func Parse(file string, data []byte) []Document {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return parseJSON(file, data)
	}
	return parseYAML(file, data)
}

func parseJSON(file string, data []byte) []Document {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []Document
	for index := 1; ; index++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			// A JSON stream cannot be resumed after a syntax error: the file ends here.
			return append(out, Document{File: file, Index: index, Err: fmt.Errorf("invalid JSON: %w", err)})
		}
		out = append(out, documents(file, index, raw)...)
	}
}

// chunk is one YAML document of a file and the line it starts on.
type chunk struct {
	line int
	text []byte
}

// splitYAML cuts data at its "---" lines, as kubectl does.
func splitYAML(data []byte) []chunk {
	var out []chunk
	cur := chunk{line: 1}
	for i, l := range bytes.SplitAfter(data, []byte("\n")) {
		if string(bytes.TrimRight(l, " \t\r\n")) == "---" {
			out = append(out, cur)
			cur = chunk{line: i + 2}
			continue
		}
		cur.text = append(cur.text, l...)
	}
	return append(out, cur)
}

func parseYAML(file string, data []byte) []Document {
	var out []Document
	index := 0
	for _, c := range splitYAML(data) {
		js, err := yaml.YAMLToJSON(c.text)
		if err == nil && (len(bytes.TrimSpace(js)) == 0 || string(js) == "null") {
			continue // an empty document: not counted
		}
		index++
		if err != nil {
			out = append(out, Document{File: file, Index: index, Err: yamlError(err, c.line)})
			continue
		}
		out = append(out, documents(file, index, js)...)
	}
	return out
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlError words a YAML parser's error with the line in the file, not in the document
// (which starts on line start).
func yamlError(err error, start int) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		return "line " + strconv.Itoa(n+start-1)
	})
	return fmt.Errorf("invalid YAML: %s", msg)
}

// documents decodes one document's JSON: the object, or a List's items.
func documents(file string, index int, js []byte) []Document {
	doc := Document{File: file, Index: index}
	var v any
	if err := utiljson.Unmarshal(js, &v); err != nil {
		doc.Err = fmt.Errorf("invalid JSON: %w", err)
		return []Document{doc}
	}
	obj, err := manifest(v)
	if err != nil {
		doc.Err = err
		return []Document{doc}
	}
	items, isList := obj.Object["items"].([]any)
	if !isList || !strings.HasSuffix(obj.GetKind(), "List") {
		doc.Object = obj
		return []Document{doc}
	}
	out := make([]Document, 0, len(items))
	for i, item := range items {
		d := Document{File: file, Index: index, Item: i + 1}
		d.Object, d.Err = manifest(item)
		out = append(out, d)
	}
	return out
}

// manifest is v as an object with apiVersion and kind.
func manifest(v any) (*unstructured.Unstructured, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a manifest: want an object with apiVersion and kind, got %s", describe(v))
	}
	obj := &unstructured.Unstructured{Object: m}
	var missing []string
	if s, ok := m["apiVersion"].(string); !ok || s == "" {
		missing = append(missing, "apiVersion")
	}
	if s, ok := m["kind"].(string); !ok || s == "" {
		missing = append(missing, "kind")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("not a manifest: no %s", strings.Join(missing, " and no "))
	}
	return obj, nil
}

func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
