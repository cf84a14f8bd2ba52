package main

// Reading a kschedx fixture: files or directories of YAML or JSON, several
// documents per file, List kinds, optional gzip; the rules of
// docs/fixtures.md. Objects are kept as JSON, in file and document order,
// and decoded into API types by kind (decode.go).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// rawObject is one object of the fixture: its kind and its JSON.
type rawObject struct {
	kind   string
	data   map[string]any
	origin string
}

func isFixtureFile(name string) bool {
	name = strings.TrimSuffix(name, ".gz")
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".json")
}

// expandPaths lists the files to read: a directory is walked recursively,
// directories and file names in sorted order, hidden files left out.
func expandPaths(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: no such file or directory", p)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		err = walkSorted(p, func(path string, name string) {
			if isFixtureFile(name) && !strings.HasPrefix(name, ".") {
				found = append(found, path)
			}
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: directory holds no .yaml, .yml or .json files", p)
		}
		files = append(files, found...)
	}
	return files, nil
}

// walkSorted visits a directory's files before its subdirectories, each in
// name order, as Python's os.walk with sorted names does.
func walkSorted(dir string, visit func(path, name string)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		} else {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	sort.Strings(dirs)
	for _, n := range names {
		visit(filepath.Join(dir, n), n)
	}
	for _, d := range dirs {
		if err := walkSorted(filepath.Join(dir, d), visit); err != nil {
			return err
		}
	}
	return nil
}

func readBytes(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return out, nil
	}
	if strings.HasSuffix(path, ".gz") {
		return nil, fmt.Errorf("%s: not a gzip file (the name ends in .gz)", path)
	}
	return data, nil
}

// readFixture returns every object of the given paths, in file and document order.
func readFixture(paths []string) ([]rawObject, error) {
	files, err := expandPaths(paths)
	if err != nil {
		return nil, err
	}
	var out []rawObject
	for _, path := range files {
		data, err := readBytes(path)
		if err != nil {
			return nil, err
		}
		docs, err := splitDocuments(path, data)
		if err != nil {
			return nil, err
		}
		for i, doc := range docs {
			origin := path
			if len(docs) > 1 {
				origin = fmt.Sprintf("%s (document %d)", path, i+1)
			}
			if err := flatten(doc, origin, &out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// splitDocuments parses a file into its documents (null documents dropped):
// one JSON value for .json files, YAML documents otherwise.
func splitDocuments(path string, data []byte) ([]any, error) {
	var docs []any
	if strings.HasSuffix(strings.TrimSuffix(path, ".gz"), ".json") {
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if v != nil {
			docs = append(docs, v)
		}
		return docs, nil
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if v != nil {
			docs = append(docs, v)
		}
	}
	return docs, nil
}

// flatten appends an object, or the items of a List / *List, to out. Items
// of a typed list without their own kind take it from the list's name.
func flatten(v any, origin string, out *[]rawObject) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: expected a Kubernetes object (a mapping with apiVersion and kind)", origin)
	}
	kind, _ := m["kind"].(string)
	if kind == "" {
		return fmt.Errorf("%s: object has no kind", origin)
	}
	items, hasItems := m["items"]
	if kind == "List" || (strings.HasSuffix(kind, "List") && hasItems) {
		list, _ := items.([]any)
		itemKind := ""
		if kind != "List" {
			itemKind = strings.TrimSuffix(kind, "List")
		}
		for _, item := range list {
			if im, ok := item.(map[string]any); ok && itemKind != "" {
				if _, has := im["kind"]; !has {
					im["kind"] = itemKind
					if _, has := im["apiVersion"]; !has && m["apiVersion"] != nil {
						im["apiVersion"] = m["apiVersion"]
					}
				}
			}
			if err := flatten(item, origin, out); err != nil {
				return err
			}
		}
		return nil
	}
	*out = append(*out, rawObject{kind: kind, data: m, origin: origin})
	return nil
}
