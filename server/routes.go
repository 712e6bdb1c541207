package server

import (
	"net/http"
	"net/url"
	"regexp"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
)

// filesWildcardPath is the route that lets file_path carry literal slashes: echo's :param stops at
// '/', so this operation is also registered with a trailing wildcard.
const (
	filesParamPath    = "/api/v2/research/:job_id_or_slug/files/:file_path"
	filesWildcardPath = "/api/v2/research/:job_id_or_slug/files/*"
)

// operation is one operation of the document, found from echo's matched route.
type operation struct {
	route   *routers.Route
	scope   string            // x-scope: the API-key scope required
	query   map[string]bool   // declared query parameters
	schemes []map[string]bool // security alternatives; an empty map means "no auth needed"
}

// routeIndex maps "METHOD echo-path" to the document's operation. Using echo's own match (instead of
// a second router) means validation, auth and metrics see exactly the route that will run.
type routeIndex map[string]*operation

var paramPattern = regexp.MustCompile(`\{([^}]+)\}`)

func echoPath(oasPath string) string { return paramPattern.ReplaceAllString(oasPath, ":$1") }

func newRouteIndex(doc *openapi3.T) routeIndex {
	idx := routeIndex{}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			o := &operation{
				route: &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: op},
				query: map[string]bool{},
			}
			o.scope, _ = op.Extensions["x-scope"].(string)
			for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
					o.query[p.Value.Name] = true
				}
			}
			sec := doc.Security
			if op.Security != nil {
				sec = *op.Security
			}
			for _, req := range sec {
				alt := map[string]bool{}
				for name := range req {
					alt[name] = true
				}
				o.schemes = append(o.schemes, alt)
			}
			ep := echoPath(path)
			idx[method+" "+ep] = o
			if ep == filesParamPath {
				idx[method+" "+filesWildcardPath] = o
			}
		}
	}
	return idx
}

func (idx routeIndex) lookup(c echo.Context) *operation {
	method := c.Request().Method
	if method == http.MethodHead {
		method = http.MethodGet // registerHead serves HEAD with the GET's handler
	}
	return idx[method+" "+c.Path()]
}

// pathParams returns echo's path parameters under the document's names, unescaped: echo matches on
// the raw (escaped) path, and the document's limits apply to the value, not to its URL encoding.
func pathParams(c echo.Context) map[string]string {
	out := map[string]string{}
	for i, name := range c.ParamNames() {
		v := c.ParamValues()[i]
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		if name == "*" {
			name = "file_path"
		}
		out[name] = v
	}
	return out
}

// allowsAnonymous reports whether the operation may run without credentials.
func (o *operation) allowsAnonymous() bool {
	if len(o.schemes) == 0 {
		return true
	}
	for _, alt := range o.schemes {
		if len(alt) == 0 {
			return true
		}
	}
	return false
}

// takesCredentials reports whether any security alternative of the operation names a scheme.
func (o *operation) takesCredentials() bool {
	for _, alt := range o.schemes {
		if len(alt) > 0 {
			return true
		}
	}
	return false
}

func (o *operation) allows(scheme string) bool {
	for _, alt := range o.schemes {
		if alt[scheme] {
			return true
		}
	}
	return false
}
