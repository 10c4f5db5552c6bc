package fastserver

import (
	"errors"
	"reflect"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/internal/sonicmem"
)

// paramsAPI decodes typed params: strings are copied (they outlive the
// request buffer) and validated as UTF-8, numbers stay exact (typed
// integer fields decode exactly; interface{} targets get json.Number),
// member names match case-sensitively.
var paramsAPI = sonic.Config{
	CopyString:     true,
	ValidateString: true,
	UseNumber:      true,
	CaseSensitive:  true,
}.Froze()

// Validator is implemented by params types that check themselves after
// decoding (required members, ranges). An error answers -32602; return
// an *Error from InvalidParams to name the field.
type Validator interface {
	Validate() error
}

// Typed returns a Handler that decodes params into a P with
// github.com/bytedance/sonic, calls fn, and encodes its result R with
// sonic. Absent params leave P at its zero value. Params that do not fit P
// answer -32602 with data naming the member at fault; if *P implements
// Validator its Validate runs before fn. The result is encoded with
// sonic's default options (map keys unsorted, HTML not escaped).
//
// A Go value can take far more memory than its JSON (a []int ~10 bytes
// for each byte of "0,0,…", an any 17-109 for "{}" or "[]"), and contract
// §3 bounds a request's decoded form: when P holds a slice, a map or an
// interface, params are first walked as P directs and refused -32602
// (field "params", "would take more than … KiB") when decoding them would
// allocate more than 6× their size + 64 KiB, within 8× the body from 32
// KiB of params on. The walk allocates nothing and costs about a quarter
// of sonic's decoding; a struct of strings and numbers is not walked.
// Typed panics for a P whose decoding no bound of its JSON bounds (one
// holding a big.Rat or a regexp.Regexp, whose text sonic hands to their
// own parsers: take those as strings; or a pointer type to itself).
//
// Typed handlers cost allocations that raw handlers do not (sonic's
// decoding and the boxing of R); use a HandlerFunc on the hot path.
func Typed[P, R any](fn func(r *Request, p *P) (R, error)) Handler {
	model, err := sonicmem.For(reflect.TypeFor[P]())
	if err != nil {
		// A registration mistake, as http.Handle's bad pattern: no
		// request could be served within contract §3.
		panic("fastserver: Typed: params type " + reflect.TypeFor[P]().String() + ": " + err.Error())
	}
	return HandlerFunc(func(r *Request, dst []byte) ([]byte, error) {
		var p P
		if params := r.Msg.Params; len(params) > 0 && r.Msg.ParamsType == decode.ParamsObject {
			budget := sonicmem.Budget(len(params))
			if decode.HasDuplicateNameDeep(params) {
				// Below params' own level the last occurrence of a name
				// wins (contract §2), where sonic would merge the two.
				budget -= uint64(len(params)) // the copy
				params = decode.AppendLastWins(make([]byte, 0, len(params)), params)
			}
			if model != nil {
				if cost, _, _ := model.Cost(params, budget, nil); cost > budget {
					return dst, InvalidParams("params", "invalid params: "+"params "+sonicmem.TooLarge(reflect.TypeFor[P](), cost, len(params)))
				}
			}
			if err := paramsAPI.Unmarshal(params, &p); err != nil {
				return dst, paramsError(params, err)
			}
		}
		if v, ok := any(&p).(Validator); ok {
			if err := v.Validate(); err != nil {
				var e *Error
				if errors.As(err, &e) {
					return dst, e
				}
				return dst, &Error{Code: decode.CodeInvalidParams, Message: err.Error()}
			}
		}
		res, err := fn(r, &p)
		if err != nil {
			return dst, err
		}
		// Invalid UTF-8 in a string becomes U+FFFD: the answer stays
		// JSON (RFC 8259 §8.1).
		if err := encoder.EncodeInto(&dst, res, encoder.ValidateString); err != nil {
			return dst, err
		}
		return dst, nil
	})
}

// paramsError names the top-level member of params in which sonic's
// decoding failed. sonic's error types differ between its native and
// compatible builds, so the position is read by field name.
func paramsError(params []byte, err error) *Error {
	field := ""
	for e := err; e != nil && field == ""; e = errors.Unwrap(e) {
		v := reflect.ValueOf(e)
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				continue
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			continue
		}
		if f := v.FieldByName("Field"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
			field = f.String()
			break
		}
		for _, name := range []string{"Pos", "Offset"} {
			if f := v.FieldByName(name); f.IsValid() && f.CanInt() {
				field = memberAt(params, int(f.Int()))
				break
			}
		}
	}
	if field == "" {
		return &Error{Code: decode.CodeInvalidParams, Message: "invalid params"}
	}
	return InvalidParams(field, "invalid params: "+field+" has the wrong type")
}

// memberAt returns the name of the top-level member of obj whose value
// spans offset pos, or "".
func memberAt(obj []byte, pos int) string {
	if pos < 0 {
		return ""
	}
	var it decode.Members
	for it.Reset(obj); it.Next(); {
		v := it.Value()
		start := cap(obj) - cap(v)
		if pos >= start && pos <= start+len(v) {
			return string(decode.AppendUnquoted(nil, append(append([]byte{'"'}, it.Name()...), '"')))
		}
	}
	return ""
}
