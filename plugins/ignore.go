package plugins

import (
	"path"
	"strings"
)

// defaultExtensions are the file types the scripting layer can compile.
var defaultExtensions = []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"}

// editorSuffixes mark backups, swap files and temporaries that editors leave
// next to the file being saved; they must never be loaded as scripts even when
// a custom extension list would otherwise match them.
var editorSuffixes = []string{"~", ".swp", ".swx", ".swo", ".tmp"}

// isHidden reports names starting with ".": dotfiles, editor temporaries such
// as ".x.js.tmp123", and the "..data" plumbing of Kubernetes ConfigMap volumes.
func isHidden(name string) bool {
	return strings.HasPrefix(name, ".")
}

// isDropping reports editor droppings: backups, swap files, Emacs lock and
// autosave files, and "4913", the file vim creates to test that it may write.
func isDropping(name string) bool {
	if name == "4913" || strings.HasPrefix(name, "#") || strings.HasPrefix(name, ".#") {
		return true
	}
	for _, s := range editorSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// skipDir reports directories that are never walked.
func skipDir(name string) bool {
	return isHidden(name) || name == "node_modules"
}

// isScript reports whether a file name is a script for the given extensions
// (lower-case, with the leading dot). TypeScript declaration files carry no
// code, so "*.d.ts" is never a script.
func isScript(name string, exts []string) bool {
	if isHidden(name) || isDropping(name) {
		return false
	}
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".d.ts") || IsTestFile(lower) {
		return false
	}
	ext := path.Ext(lower)
	for _, e := range exts {
		if ext == e {
			return true
		}
	}
	return false
}

// normalizeExtensions lower-cases extensions and adds the leading dot, so
// "JS" and ".js" mean the same; nil or empty means the defaults.
func normalizeExtensions(exts []string) []string {
	if len(exts) == 0 {
		exts = defaultExtensions
	}
	out := make([]string, 0, len(exts))
	for _, e := range exts {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		out = append(out, e)
	}
	return out
}

// IsTestFile reports a test file of `runner test`: "*.test.js", "*.test.ts" and the other
// script extensions. Test files sit next to plugins but are never loaded as plugins.
func IsTestFile(name string) bool {
	lower := strings.ToLower(path.Base(name))
	ext := path.Ext(lower)
	for _, e := range defaultExtensions {
		if ext == e {
			return strings.HasSuffix(strings.TrimSuffix(lower, ext), ".test")
		}
	}
	return false
}
