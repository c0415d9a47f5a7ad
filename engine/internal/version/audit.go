package version

import "github.com/jsinformer/jsinformer/scripting"

// AuditCache is what ctx.cache reads in an audit of resource (package engine/internal/audit):
// the cache validate reads in admission, v's store with its indexes. Safe from any goroutine.
func (v *Version) AuditCache(resource string) scripting.Cache { return v.admissionCache(resource) }
