package gen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/types"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// tickPayloadProblem decodes a periodic task's payload='JSON' into its
// payload type as encoding/json would, unknown fields refused, and names
// the first value that does not fit: such a payload would fail every tick
// for good. A type that decodes itself (UnmarshalJSON, UnmarshalText) is
// taken on trust.
func tickPayloadProblem(t types.Type, payload, path string) string {
	dec := json.NewDecoder(bytes.NewReader([]byte(payload)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err.Error() // the directive parser already refused invalid JSON
	}
	return decodesInto(t, v, path)
}

func decodesInto(t types.Type, v any, path string) string {
	if v == nil {
		return "" // null leaves the zero value
	}
	if named, ok := types.Unalias(t).(*types.Named); ok && marshalsItself(named) {
		return ""
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		return decodesInto(u.Elem(), v, path)
	case *types.Interface:
		return ""
	case *types.Basic:
		return basicFrom(u, v, path)
	case *types.Slice:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Kind() == types.Uint8 {
			s, ok := v.(string)
			if _, err := base64.StdEncoding.DecodeString(s); !ok || err != nil {
				return fmt.Sprintf("%s is []byte: give it a base64 string, not %s", path, jsonKind(v))
			}
			return ""
		}
		return elementsInto(u.Elem(), v, path)
	case *types.Array:
		return elementsInto(u.Elem(), v, path)
	case *types.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is a map: give it an object, not %s", path, jsonKind(v))
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if b, ok := u.Key().Underlying().(*types.Basic); ok && b.Info()&types.IsInteger != 0 {
				if p := basicFrom(b, json.Number(k), fmt.Sprintf("%s key %q", path, k)); p != "" {
					return p
				}
			}
			if p := decodesInto(u.Elem(), obj[k], fmt.Sprintf("%s[%q]", path, k)); p != "" {
				return p
			}
		}
		return ""
	case *types.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is a struct: give it an object, not %s", path, jsonKind(v))
		}
		fields := jsonFields(u)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			f, ok := fieldNamed(fields, k)
			switch {
			case !ok:
				return fmt.Sprintf("%s has no field %q", path, k)
			case f.quoted:
				continue // ",string": the value is a string holding the JSON
			}
			if p := decodesInto(f.typ, obj[k], path+"."+f.goName); p != "" {
				return p
			}
		}
	}
	return ""
}

// elementsInto checks a JSON array's elements against elem.
func elementsInto(elem types.Type, v any, path string) string {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Sprintf("%s is a list: give it an array, not %s", path, jsonKind(v))
	}
	for i, e := range arr {
		if p := decodesInto(elem, e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
			return p
		}
	}
	return ""
}

// basicFrom checks a JSON value against a string, bool or number type,
// numbers against the type's range.
func basicFrom(b *types.Basic, v any, path string) string {
	info := b.Info()
	switch {
	case info&types.IsString != 0:
		if _, ok := v.(string); ok {
			return ""
		}
	case info&types.IsBoolean != 0:
		if _, ok := v.(bool); ok {
			return ""
		}
	case info&types.IsNumeric != 0:
		n, ok := v.(json.Number)
		if !ok {
			break
		}
		var err error
		switch {
		case info&types.IsUnsigned != 0:
			_, err = strconv.ParseUint(string(n), 10, bitSize(b))
		case info&types.IsInteger != 0:
			_, err = strconv.ParseInt(string(n), 10, bitSize(b))
		default:
			_, err = strconv.ParseFloat(string(n), bitSize(b))
		}
		if err != nil {
			return fmt.Sprintf("%s is %s: %s does not fit", path, b.Name(), n)
		}
		return ""
	default:
		return ""
	}
	return fmt.Sprintf("%s is %s: give it %s, not %s", path, b.Name(), jsonKindOf(b), jsonKind(v))
}

// bitSize is a numeric type's size in bits, 64 for int, uint and uintptr.
func bitSize(b *types.Basic) int {
	switch b.Kind() {
	case types.Int8, types.Uint8:
		return 8
	case types.Int16, types.Uint16:
		return 16
	case types.Int32, types.Uint32, types.Float32:
		return 32
	}
	return 64
}

// jsonKindOf names the JSON value a basic type decodes from.
func jsonKindOf(b *types.Basic) string {
	switch {
	case b.Info()&types.IsString != 0:
		return "a string"
	case b.Info()&types.IsBoolean != 0:
		return "true or false"
	}
	return "a number"
}

// jsonKind names a decoded JSON value's kind.
func jsonKind(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + string(v)
	case bool:
		return fmt.Sprintf("%t", v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name, goName string
	typ          types.Type
	quoted       bool
}

// jsonFields lists st's fields by their JSON names, with the fields of
// untagged embedded structs promoted (the outer one first).
func jsonFields(st *types.Struct) []jsonField {
	var fields, promoted []jsonField
	for i := range st.NumFields() {
		f := st.Field(i)
		name, opts, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if f.Embedded() && name == "" {
			t := f.Type()
			if p, ok := t.Underlying().(*types.Pointer); ok {
				t = p.Elem()
			}
			if inner, ok := t.Underlying().(*types.Struct); ok {
				promoted = append(promoted, jsonFields(inner)...)
				continue
			}
		}
		if !f.Exported() {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		fields = append(fields, jsonField{name: name, goName: f.Name(), typ: f.Type(), quoted: strings.Contains(opts, "string")})
	}
	return append(fields, promoted...)
}

// fieldNamed finds the field a JSON key decodes into: its exact name,
// else one equal under case folding, as encoding/json matches.
func fieldNamed(fields []jsonField, key string) (jsonField, bool) {
	if i := slices.IndexFunc(fields, func(f jsonField) bool { return f.name == key }); i >= 0 {
		return fields[i], true
	}
	if i := slices.IndexFunc(fields, func(f jsonField) bool { return strings.EqualFold(f.name, key) }); i >= 0 {
		return fields[i], true
	}
	return jsonField{}, false
}
