package scripting

import (
	"github.com/dop251/goja/ast"
)

// Whether a script reads `ctx.cache`, told from its source: an admission-only script that
// never does needs no informer of its watches (Program.ReadsCache).

// cacheKey is the name of ctx's cache property.
const cacheKey = "cache"

// ReadsCache reports whether the program's source (with its modules) may read `ctx.cache`: it
// names a property "cache" (ctx.cache, ctx?.cache, { cache } = ctx, { cache: c } = ctx) or
// holds the string "cache" (ctx["cache"], a constant key). A key built at run time, as
// ctx["ca" + "che"], is not seen: a version started without informers gives such a script
// no cache, and ctx.cache throws when it is used.
func (p *Program) ReadsCache() bool { return p.readsCache }

// readsCache is ReadsCache's analysis of a parsed program.
func readsCache(prg *ast.Program) bool {
	found := false
	walkAST(prg, func(node any) {
		if !found {
			found = namesCache(node)
		}
	})
	return found
}

func namesCache(node any) bool {
	switch n := node.(type) {
	case *ast.DotExpression:
		return n.Identifier.Name == cacheKey
	case *ast.PropertyShort:
		return n.Name.Name == cacheKey
	case *ast.StringLiteral:
		return n.Value == cacheKey
	case *ast.TemplateLiteral:
		for _, e := range n.Elements {
			if e.Parsed == cacheKey {
				return true
			}
		}
	}
	return false
}

// NeedsInformers reports whether a script of p with definition def needs the informers of its
// watches. A script whose only handlers are validate and mutate, with no index functions, and
// that never reads ctx.cache (ReadsCache) and does not audit (admission.audit: the audit
// walks the cache) uses its watches only to say what its webhooks cover: it needs no
// informer, and no list or watch permission.
func NeedsInformers(p *Program, def Definition) bool {
	admissionOnly := (def.Validate || def.Mutate) && !def.OnAdd && !def.OnUpdate && !def.OnDelete && !def.Reconcile &&
		len(def.Schedules) == 0 && len(def.Indexers) == 0 && !def.Admission.Audit
	return !admissionOnly || p.ReadsCache()
}
