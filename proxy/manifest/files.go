package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// manifestExts are the file name endings a directory walk picks up.
var manifestExts = []string{".yaml", ".yml", ".json"}

// listFiles expands paths into files, keeping the order of paths and
// dropping repeats so that overlapping arguments do not read a file twice
// (which would report every object in it as a duplicate).
func listFiles(paths []string) ([]string, []error) {
	var files []string
	var errs []error
	seen := map[string]bool{}
	for _, p := range paths {
		found, err := filesUnder(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range found {
			if !seen[filepath.Clean(f)] {
				seen[filepath.Clean(f)] = true
				files = append(files, f)
			}
		}
	}
	return files, errs
}

// filesUnder returns root itself when it is a file, whatever its name, and
// the manifest files below it, sorted, when it is a directory. A directory
// without any is an error: it is more likely a wrong path than an empty
// cluster.
func filesUnder(root string) ([]string, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{root}, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && slices.Contains(manifestExts, strings.ToLower(filepath.Ext(path))) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .yaml, .yml or .json files", root)
	}
	slices.Sort(files)
	return files, nil
}

// yamlDoc is one document of a YAML file.
type yamlDoc struct {
	data []byte
	// line is the 0-based line of the file the document starts on.
	line int
}

// splitYAML splits data at "---" lines, as kubectl does, and drops documents
// holding only blank lines and comments, so that a leading "---" or a
// trailing one does not shift the document numbers users see.
func splitYAML(data []byte) []yamlDoc {
	var docs []yamlDoc
	var cur yamlDoc
	content := false
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if rest, ok := separator(line); ok {
			if content {
				docs = append(docs, cur)
			}
			cur = yamlDoc{data: slices.Clone(rest), line: i}
			content = !blank(rest)
			continue
		}
		cur.data = append(cur.data, line...)
		content = content || !blank(line)
	}
	if content {
		docs = append(docs, cur)
	}
	return docs
}

// toJSON converts the document to JSON, rejecting duplicate keys. On a parse
// error it parses again behind as many newlines as precede the document, so
// that the line in the message is the file's; only failures pay for that.
func (d yamlDoc) toJSON() ([]byte, error) {
	j, err := yaml.YAMLToJSONStrict(d.data)
	if err == nil || d.line == 0 {
		return j, err
	}
	padded := append(bytes.Repeat([]byte("\n"), d.line), d.data...)
	if _, perr := yaml.YAMLToJSONStrict(padded); perr != nil {
		err = perr
	}
	return nil, err
}

// separator reports whether line starts a new document. Text after the
// marker ("--- !tag" or "--- # comment") belongs to the new document.
func separator(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok || (len(rest) > 0 && !isSpace(rest[0])) {
		return nil, false
	}
	return rest, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func blank(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) == 0 || t[0] == '#'
}

// splitJSON splits a stream of concatenated JSON values, as kubectl accepts.
func splitJSON(data []byte) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs [][]byte
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, jsonSyntaxError(data, err)
		}
		docs = append(docs, raw)
	}
}

// jsonSyntaxError adds the line to a syntax error, which encoding/json
// reports only as a byte offset.
func jsonSyntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	line := 1 + bytes.Count(data[:min(se.Offset, int64(len(data)))], []byte("\n"))
	return fmt.Errorf("line %d: %w", line, err)
}
