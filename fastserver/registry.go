package fastserver

import (
	"errors"
	"fmt"
	"sort"

	"github.com/rpcedge/rpcedge/decode"
)

// Methods is a registry of JSON-RPC methods by name. Register every method
// before serving; a Methods is safe for concurrent lookups once
// registration is over, not during it.
//
// Registration never panics: a duplicate or empty name, or a nil handler,
// is recorded and reported by Err, which the server checks at start-up
// (New fails), so a mistake cannot reach production silently.
type Methods struct {
	m    map[string]method
	errs []error
}

type method struct {
	h    Handler
	name string // the key, for labels that do not borrow from requests
}

// Handle registers h for the method name.
func (ms *Methods) Handle(name string, h Handler) {
	switch {
	case name == "":
		ms.errs = append(ms.errs, errors.New("fastserver: a method registered with an empty name"))
		return
	case h == nil || isNilFunc(h):
		ms.errs = append(ms.errs, fmt.Errorf("fastserver: method %q registered with a nil handler", name))
		return
	}
	if _, dup := ms.m[name]; dup {
		ms.errs = append(ms.errs, fmt.Errorf("fastserver: method %q registered twice", name))
		return
	}
	if ms.m == nil {
		ms.m = make(map[string]method)
	}
	ms.m[name] = method{h, name}
}

// HandleFunc registers f for the method name.
func (ms *Methods) HandleFunc(name string, f func(r *Request, dst []byte) ([]byte, error)) {
	if f == nil {
		ms.Handle(name, nil)
		return
	}
	ms.Handle(name, HandlerFunc(f))
}

// Lookup returns the handler of a method. It allocates nothing.
func (ms *Methods) Lookup(name []byte) (Handler, bool) {
	e, ok := ms.m[string(name)]
	return e.h, ok
}

// Route returns the Route of a method: its handler and its name as the
// label, or the zero Route (404 / -32601) when it is not registered.
func (ms *Methods) Route(name []byte) Route {
	e, ok := ms.m[string(name)]
	if !ok {
		return Route{}
	}
	return Route{Handler: e.h, Label: e.name}
}

// Names returns the registered names, sorted.
func (ms *Methods) Names() []string {
	names := make([]string, 0, len(ms.m))
	for n := range ms.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Err returns every registration mistake, joined, or nil.
func (ms *Methods) Err() error { return errors.Join(ms.errs...) }

// Endpoint returns an Endpoint that serves the registered methods at path,
// with the given id policy and no header checks. Registration mistakes
// (Err) make the server's New fail.
func (ms *Methods) Endpoint(path string, ids decode.IDPolicy) *Endpoint {
	return &Endpoint{
		Path:   path,
		IDs:    ids,
		Labels: ms.Names(),
		Route:  func(r *Request) Route { return ms.Route(r.Msg.Method) },
		Err:    ms.Err(),
	}
}

func isNilFunc(h Handler) bool {
	f, ok := h.(HandlerFunc)
	return ok && f == nil
}
