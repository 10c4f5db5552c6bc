package mcp

import (
	"errors"
	"strings"
	"testing"
)

func TestSchemaCompileErrors(t *testing.T) {
	bad := map[string]string{
		"not JSON":                  `{"type":`,
		"root not an object":        `[]`,
		"root boolean":              `true`,
		"root without type":         `{"properties":{}}`,
		"root of another type":      `{"type":"array"}`,
		"root with several types":   `{"type":["object","null"]}`,
		"unknown type":              `{"type":"object","properties":{"x":{"type":"str"}}}`,
		"type repeated":             `{"type":"object","properties":{"x":{"type":["string","string"]}}}`,
		"type empty array":          `{"type":"object","properties":{"x":{"type":[]}}}`,
		"type a number":             `{"type":"object","properties":{"x":{"type":1}}}`,
		"keyword twice":             `{"type":"object","type":"object"}`,
		"property twice":            `{"type":"object","properties":{"x":{},"x":{}}}`,
		"properties not an object":  `{"type":"object","properties":[]}`,
		"property schema a number":  `{"type":"object","properties":{"x":1}}`,
		"required not an array":     `{"type":"object","required":"x"}`,
		"required not strings":      `{"type":"object","required":[1]}`,
		"required repeated":         `{"type":"object","required":["x","x"]}`,
		"enum not an array":         `{"type":"object","properties":{"x":{"enum":1}}}`,
		"enum empty":                `{"type":"object","properties":{"x":{"enum":[]}}}`,
		"items tuple":               `{"type":"object","properties":{"x":{"items":[{}]}}}`,
		"minimum not a number":      `{"type":"object","properties":{"x":{"minimum":"1"}}}`,
		"maximum not a number":      `{"type":"object","properties":{"x":{"maximum":null}}}`,
		"minLength negative":        `{"type":"object","properties":{"x":{"minLength":-1}}}`,
		"maxLength fractional":      `{"type":"object","properties":{"x":{"maxLength":1.5}}}`,
		"additionalProperties bad":  `{"type":"object","additionalProperties":"no"}`,
		"$schema unknown dialect":   `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`,
		"$schema not at the root":   `{"type":"object","properties":{"x":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`,
		"$ref":                      `{"type":"object","properties":{"x":{"$ref":"#/$defs/y"}},"$defs":{"y":{}}}`,
		"anyOf":                     `{"type":"object","anyOf":[{}]}`,
		"oneOf nested":              `{"type":"object","properties":{"x":{"oneOf":[{}]}}}`,
		"allOf":                     `{"type":"object","allOf":[]}`,
		"not":                       `{"type":"object","not":{}}`,
		"if":                        `{"type":"object","if":{}}`,
		"const":                     `{"type":"object","properties":{"x":{"const":1}}}`,
		"pattern not RE2":           `{"type":"object","properties":{"x":{"pattern":"(?<=a)b"}}}`,
		"exclusiveMinimum":          `{"type":"object","properties":{"x":{"exclusiveMinimum":0}}}`,
		"multipleOf":                `{"type":"object","properties":{"x":{"multipleOf":2}}}`,
		"minItems negative":         `{"type":"object","properties":{"x":{"minItems":-1}}}`,
		"maxItems fractional":       `{"type":"object","properties":{"x":{"maxItems":1.5}}}`,
		"uniqueItems":               `{"type":"object","properties":{"x":{"uniqueItems":true}}}`,
		"prefixItems":               `{"type":"object","properties":{"x":{"prefixItems":[]}}}`,
		"patternProperties":         `{"type":"object","patternProperties":{}}`,
		"propertyNames":             `{"type":"object","propertyNames":{}}`,
		"minProperties":             `{"type":"object","minProperties":1}`,
		"dependentRequired":         `{"type":"object","dependentRequired":{}}`,
		"unevaluatedProperties":     `{"type":"object","unevaluatedProperties":false}`,
		"other extension":           `{"type":"object","x-vendor":1}`,
		"unsupported in items":      `{"type":"object","properties":{"x":{"items":{"format":"uri","uniqueItems":true}}}}`,
		"unsupported in additional": `{"type":"object","additionalProperties":{"const":1}}`,
	}
	for name, text := range bad {
		if _, err := compileSchema([]byte(text)); err == nil {
			t.Errorf("%s: %s compiled", name, text)
		} else if !errors.Is(err, errSchema) {
			t.Errorf("%s: %v does not wrap errSchema", name, err)
		}
	}
	_, err := compileSchema([]byte(`{"type":"object","properties":{"a/b":{"properties":{"c":{"const":"x"}}}}}`))
	if err == nil || !strings.Contains(err.Error(), "/properties/a~1b/properties/c/const") || !strings.Contains(err.Error(), `"const"`) {
		t.Errorf("error does not locate the keyword: %v", err)
	}

	good := []string{
		``,
		` `,
		`{"type":"object"}`,
		`{"type":["object"]}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"t","description":"d","$comment":"c","examples":[{}],"default":{},"deprecated":false,"readOnly":false,"writeOnly":false}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`,
		`{"type":"object","properties":{"r":{},"s":{"type":"string","format":"date-time","minLength":0,"maxLength":1e3},"n":{"type":["number","null"],"minimum":-1e400,"maximum":1E+400},"e":{"enum":[1,"a",null,[1],{"x":1}]},"a":{"type":"array","items":{"type":"object","properties":{"x":true,"y":false},"required":["x"],"additionalProperties":{"type":"integer"}}}},"required":[],"additionalProperties":true}`,
		` {"type" : "object" , "properties" : { "x" : { } } } `,
		`{"type":"object","additionalProperties":false}`,
	}
	for _, text := range good {
		if _, err := compileSchema([]byte(text)); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
}

func TestSchemaValidate(t *testing.T) {
	type check struct {
		args  string
		field string // "" when valid
	}
	tests := []struct {
		name   string
		schema string
		checks []check
	}{
		{"type string", `{"type":"object","properties":{"x":{"type":"string"}}}`, []check{
			{`{"x":"a"}`, ""}, {`{"x":""}`, ""}, {`{}`, ""},
			{`{"x":1}`, "arguments.x"}, {`{"x":null}`, "arguments.x"}, {`{"x":true}`, "arguments.x"},
			{`{"x":[]}`, "arguments.x"}, {`{"x":{}}`, "arguments.x"},
		}},
		{"type number", `{"type":"object","properties":{"x":{"type":"number"}}}`, []check{
			{`{"x":1}`, ""}, {`{"x":-1.5e-300}`, ""}, {`{"x":1e400}`, ""}, {`{"x":12345678901234567890123}`, ""},
			{`{"x":"1"}`, "arguments.x"}, {`{"x":null}`, "arguments.x"},
		}},
		{"type integer", `{"type":"object","properties":{"x":{"type":"integer"}}}`, []check{
			{`{"x":1}`, ""}, {`{"x":-0}`, ""}, {`{"x":1.0}`, ""}, {`{"x":1.50e1}`, ""}, {`{"x":1e400}`, ""},
			{`{"x":12345678901234567890123}`, ""}, {`{"x":0.0e5}`, ""}, {`{"x":100e-2}`, ""},
			{`{"x":1.5}`, "arguments.x"}, {`{"x":1e-1}`, "arguments.x"}, {`{"x":1.000000000000000000001}`, "arguments.x"},
			{`{"x":123e-2}`, "arguments.x"}, {`{"x":"1"}`, "arguments.x"},
		}},
		{"type boolean and null", `{"type":"object","properties":{"b":{"type":"boolean"},"n":{"type":"null"}}}`, []check{
			{`{"b":true,"n":null}`, ""}, {`{"b":false}`, ""},
			{`{"b":0}`, "arguments.b"}, {`{"n":false}`, "arguments.n"}, {`{"b":"true"}`, "arguments.b"},
		}},
		{"type list", `{"type":"object","properties":{"x":{"type":["string","integer"]}}}`, []check{
			{`{"x":"a"}`, ""}, {`{"x":2}`, ""}, {`{"x":2.5}`, "arguments.x"}, {`{"x":null}`, "arguments.x"},
		}},
		{"required", `{"type":"object","required":["a","b\u0021"]}`, []check{
			{`{"a":1,"b!":2}`, ""}, {`{"a":null,"b\u0021":null}`, ""},
			{`{"a":1}`, "arguments.b!"}, {`{"b!":1}`, "arguments.a"}, {`{"A":1,"b!":1}`, "arguments.a"},
		}},
		{"enum", `{"type":"object","properties":{"x":{"enum":["a","caf\u00e9",1,null,[1,"x"],{"k":[true]}]}}}`, []check{
			{`{"x":"a"}`, ""}, {`{"x":"café"}`, ""}, {`{"x":"caf\u00e9"}`, ""}, {`{"x":"\u0061"}`, ""},
			{`{"x":1}`, ""}, {`{"x":1.0}`, ""}, {`{"x":10e-1}`, ""}, {`{"x":null}`, ""},
			{`{"x":[1,"x"]}`, ""}, {`{"x":[1.0,"\u0078"]}`, ""}, {`{"x":{"k":[true]}}`, ""}, {`{"x":{ "k" : [ true ] }}`, ""},
			{`{"x":"A"}`, "arguments.x"}, {`{"x":2}`, "arguments.x"}, {`{"x":"1"}`, "arguments.x"},
			{`{"x":[1]}`, "arguments.x"}, {`{"x":[1,"x",2]}`, "arguments.x"}, {`{"x":{"k":[false]}}`, "arguments.x"},
			{`{"x":{"k":[true],"j":1}}`, "arguments.x"}, {`{"x":{}}`, "arguments.x"}, {`{"x":false}`, "arguments.x"},
		}},
		{"minimum and maximum", `{"type":"object","properties":{"x":{"minimum":-2.5,"maximum":10}}}`, []check{
			{`{"x":-2.5}`, ""}, {`{"x":10}`, ""}, {`{"x":10.0}`, ""}, {`{"x":1e1}`, ""}, {`{"x":0}`, ""}, {`{"x":-0.0}`, ""},
			{`{"x":-2.50000000000000000001}`, "arguments.x"}, {`{"x":10.000000000000000000001}`, "arguments.x"},
			{`{"x":1e400}`, "arguments.x"}, {`{"x":-1e400}`, "arguments.x"}, {`{"x":11}`, "arguments.x"},
			{`{"x":"100"}`, ""}, // bounds apply to numbers only
		}},
		{"big integer bounds", `{"type":"object","properties":{"x":{"type":"integer","minimum":9007199254740993,"maximum":12345678901234567890123}}}`, []check{
			{`{"x":9007199254740993}`, ""}, {`{"x":12345678901234567890123}`, ""}, {`{"x":1.2345678901234567890123e22}`, ""},
			{`{"x":9007199254740992}`, "arguments.x"}, {`{"x":12345678901234567890124}`, "arguments.x"},
			{`{"x":9.007199254740992e15}`, "arguments.x"},
		}},
		{"exponent bounds", `{"type":"object","properties":{"x":{"minimum":1e-400,"maximum":1e400}}}`, []check{
			{`{"x":1e-400}`, ""}, {`{"x":1}`, ""}, {`{"x":1e400}`, ""}, {`{"x":0.1e401}`, ""},
			{`{"x":0}`, "arguments.x"}, {`{"x":1e-401}`, "arguments.x"}, {`{"x":1.0000000001e400}`, "arguments.x"},
			{`{"x":1e99999999999999999999}`, "arguments.x"}, {`{"x":-5}`, "arguments.x"},
		}},
		{"minLength and maxLength in code points", `{"type":"object","properties":{"x":{"minLength":2,"maxLength":3}}}`, []check{
			{`{"x":"ab"}`, ""}, {`{"x":"abc"}`, ""}, {`{"x":"éé"}`, ""}, {`{"x":"日本語"}`, ""},
			{`{"x":"😀😀😀"}`, ""}, {`{"x":"\ud83d\ude00\ud83d\ude00"}`, ""}, {`{"x":"\u00e9\n"}`, ""}, {`{"x":"a\"\\"}`, ""},
			{`{"x":"a"}`, "arguments.x"}, {`{"x":"é"}`, "arguments.x"}, {`{"x":"\ud83d\ude00"}`, "arguments.x"},
			{`{"x":"abcd"}`, "arguments.x"}, {`{"x":"日本語!"}`, "arguments.x"}, {`{"x":"\u0061\u0062\u0063\u0064"}`, "arguments.x"},
			{`{"x":7}`, ""}, // lengths apply to strings only
		}},
		{"zero lengths", `{"type":"object","properties":{"x":{"maxLength":0}}}`, []check{
			{`{"x":""}`, ""}, {`{"x":" "}`, "arguments.x"},
		}},
		{"additionalProperties false", `{"type":"object","properties":{"a":{}},"additionalProperties":false}`, []check{
			{`{}`, ""}, {`{"a":1}`, ""}, {`{"\u0061":1}`, ""},
			{`{"b":1}`, "arguments.b"}, {`{"a":1,"A":1}`, "arguments.A"},
		}},
		{"additionalProperties schema", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}`, []check{
			{`{"a":"s","b":1,"c":2}`, ""}, {`{"b":"s"}`, "arguments.b"}, {`{"a":1}`, "arguments.a"},
		}},
		{"boolean property schemas", `{"type":"object","properties":{"yes":true,"no":false}}`, []check{
			{`{"yes":[1,{"x":null}]}`, ""}, {`{"no":1}`, "arguments.no"}, {`{"no":null}`, "arguments.no"},
		}},
		{"nested", `{"type":"object","properties":{"user":{"type":"object","properties":{"name":{"type":"string","minLength":1},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},"pets":{"type":"array","items":{"type":"object","required":["kind"],"additionalProperties":false,"properties":{"kind":{"type":"string"}}}}},"required":["name"]}},"required":["user"]}`, []check{
			{`{"user":{"name":"x","tags":["a","b","a"],"pets":[{"kind":"cat"},{"kind":"dog"}]}}`, ""},
			{`{"user":{"name":"x","tags":[]}}`, ""},
			{`{}`, "arguments.user"},
			{`{"user":{}}`, "arguments.user.name"},
			{`{"user":{"name":""}}`, "arguments.user.name"},
			{`{"user":{"name":"x","tags":"a"}}`, "arguments.user.tags"},
			{`{"user":{"name":"x","tags":["a","c"]}}`, "arguments.user.tags[1]"},
			{`{"user":{"name":"x","pets":[{"kind":"cat"},{}]}}`, "arguments.user.pets[1].kind"},
			{`{"user":{"name":"x","pets":[{"kind":"cat","age":3}]}}`, "arguments.user.pets[0].age"},
			{`{"user":{"name":"x","pets":[{"kind":1}]}}`, "arguments.user.pets[0].kind"},
			{`{"user":[]}`, "arguments.user"},
		}},
		{"items without type", `{"type":"object","properties":{"x":{"items":{"type":"integer"}}}}`, []check{
			{`{"x":[1,2,3]}`, ""}, {`{"x":[]}`, ""}, {`{"x":"not an array"}`, ""},
			{`{"x":[1,2.5]}`, "arguments.x[1]"}, {`{"x":[[1]]}`, "arguments.x[0]"},
		}},
		{"deep duplicates: the last occurrence is judged", `{"type":"object","properties":{"o":{"properties":{"k":{"type":"string"}}}}}`, []check{
			{`{"o":{"k":"a","k":"b"}}`, ""}, {`{"o":{"k":"a","k":1}}`, "arguments.o.k"}, {`{"o":{"k":1,"k":"a"}}`, ""},
			{`{"o":{"k":1,"\u006b":"a"}}`, ""}, {`{"o":{"k":"a","\u006b":1}}`, "arguments.o.k"},
		}},
		{"deep duplicates and enum", `{"type":"object","properties":{"o":{"enum":[{"a":1,"b":2}]}}}`, []check{
			{`{"o":{"a":1,"b":2}}`, ""}, {`{"o":{"a":0,"b":2,"a":1}}`, ""}, {`{"o":{"a":1,"b":2,"a":0}}`, "arguments.o"},
			{`{"o":{"a":1,"a":1}}`, "arguments.o"},
		}},
		{"pattern", `{"type":"object","properties":{"k":{"type":"string","pattern":"^[a-z]+$"},"u":{"pattern":"é+"}}}`, []check{
			{`{"k":"abc"}`, ""}, {`{"k":"\u0061bc"}`, ""}, {`{"u":"xéé"}`, ""}, {`{"u":"x\u00e9"}`, ""}, {`{"u":1}`, ""},
			{`{"k":"Abc"}`, "arguments.k"}, {`{"k":""}`, "arguments.k"}, {`{"k":"ab\n"}`, "arguments.k"}, {`{"u":"e"}`, "arguments.u"},
		}},
		{"escaped property names", `{"type":"object","properties":{"a\"b":{"type":"string"},"é":{"type":"integer"}},"additionalProperties":false}`, []check{
			{`{"a\"b":"s","\u00e9":1,"é":2}`, ""}, {`{"a\u0022b":1}`, `arguments.a"b`}, {`{"\u00e9":"s"}`, "arguments.é"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := compileSchema([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.checks {
				e := s.validate(trimWS([]byte(c.args)))
				switch {
				case e == nil && c.field != "":
					t.Errorf("%s: valid, want a failure at %s", c.args, c.field)
				case e != nil && c.field == "":
					t.Errorf("%s: %s %s", c.args, e.field("arguments"), e.msg)
				case e != nil && e.field("arguments") != c.field:
					t.Errorf("%s: failure at %s (%s), want %s", c.args, e.field("arguments"), e.msg, c.field)
				}
			}
		})
	}
}

func TestSchemaMessages(t *testing.T) {
	s, err := compileSchema([]byte(`{"type":"object","properties":{"r":{},"s":{"type":"string","minLength":2,"maxLength":3},"n":{"type":["integer","null"],"minimum":0,"maximum":5},"e":{"enum":[1]}},"required":["r"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{}`:                 "is required",
		`{"r":1,"s":1}`:      "must be a string",
		`{"r":1,"s":"a"}`:    "must be at least 2 characters long",
		`{"r":1,"s":"abcd"}`: "must be at most 3 characters long",
		`{"r":1,"n":"x"}`:    "must be an integer or null",
		`{"r":1,"n":-1}`:     "is less than the minimum",
		`{"r":1,"n":6}`:      "is greater than the maximum",
		`{"r":1,"e":2}`:      "must be one of the values the schema's enum lists",
		`{"r":1,"z":2}`:      "is not a member the schema allows",
	} {
		e := s.validate([]byte(args))
		if e == nil || e.msg != want {
			t.Errorf("%s: %+v, want %q", args, e, want)
		}
	}
}

func TestTypeMessage(t *testing.T) {
	for ts, want := range map[typeSet]string{
		tString:                     "must be a string",
		tObject:                     "must be an object",
		tNull:                       "must be null",
		tString | tNull:             "must be a string or null",
		tArray | tNumber | tBoolean: "must be an array, a number or a boolean",
	} {
		if got := typeMessage(ts); got != want {
			t.Errorf("%b: %q", ts, got)
		}
	}
}
