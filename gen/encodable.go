package gen

import (
	"go/token"
	"go/types"
	"reflect"
	"strings"
)

// encodabilityChecker rejects payload and result types that cannot
// round-trip through their encoding (encoding/json): the decoded value
// must equal the encoded one.
type encodabilityChecker struct {
	pkg  *types.Package // the annotated package: positions inside it are precise
	fset *token.FileSet
	errs *errorCollector
	seen map[types.Type]bool
}

// check walks t; path names the value for messages (ImportPayload.Items[].Price)
// and pos is the nearest field of the annotated package on the way.
func (c *encodabilityChecker) check(t types.Type, path string, pos token.Position) {
	if named, ok := types.Unalias(t).(*types.Named); ok {
		if c.seen[named] {
			return // recursive types are fine through pointers, slices and maps
		}
		c.seen[named] = true
		if named.TypeArgs().Len() > 0 || named.TypeParams().Len() > 0 {
			c.errs.add(pos, "use a non-generic type", "%s has generic type %s", path, c.typeString(t))
			return
		}
		if marshalsItself(named) {
			return // time.Time and friends
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Kind() == types.Invalid:
			c.errs.add(pos, "fix the compile error first", "%s has an invalid type", path)
		case u.Info()&types.IsComplex != 0:
			c.errs.add(pos, "store the real and imaginary parts as two float fields", "%s has type %s: JSON cannot encode complex numbers", path, c.typeString(t))
		case u.Kind() == types.UnsafePointer:
			c.errs.add(pos, "", "%s has type unsafe.Pointer, which cannot be encoded", path)
		}
	case *types.Pointer:
		c.check(u.Elem(), path, pos)
	case *types.Slice:
		c.check(u.Elem(), path+"[]", pos)
	case *types.Array:
		c.check(u.Elem(), path+"[]", pos)
	case *types.Map:
		if !mapKeyOK(u.Key()) {
			c.errs.add(pos, "use string (or integer) map keys", "%s has map key type %s, which JSON cannot encode", path, c.typeString(u.Key()))
		}
		c.check(u.Elem(), path+"[]", pos)
	case *types.Struct:
		c.checkStruct(u, path, pos)
	case *types.Interface:
		c.errs.add(pos, "use a concrete type: a decoded interface loses its dynamic type", "%s has interface type %s", path, c.typeString(t))
	case *types.Chan:
		c.errs.add(pos, "payloads and results are data: leave channels out", "%s has channel type %s", path, c.typeString(t))
	case *types.Signature:
		c.errs.add(pos, "payloads and results are data: leave functions out", "%s has function type %s", path, c.typeString(t))
	case *types.TypeParam:
		c.errs.add(pos, "use a concrete type", "%s has type parameter type %s", path, c.typeString(t))
	}
}

func (c *encodabilityChecker) checkStruct(st *types.Struct, path string, pos token.Position) {
	exported, unexported := 0, 0
	for i := range st.NumFields() {
		f := st.Field(i)
		if name, _, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("json"), ","); name == "-" {
			continue
		}
		fieldPos := pos
		if f.Pkg() == c.pkg {
			fieldPos = c.fset.Position(f.Pos())
			fieldPos.Filename = relativePath(fieldPos.Filename)
		}
		switch {
		case f.Embedded():
			// JSON promotes the fields of embedded structs, exported or not.
			exported++
			c.check(f.Type(), path, fieldPos)
		case !f.Exported():
			unexported++
		default:
			exported++
			c.check(f.Type(), path+"."+f.Name(), fieldPos)
		}
	}
	if exported == 0 && unexported > 0 {
		c.errs.add(pos, "export the fields, or give the type MarshalJSON and UnmarshalJSON methods", "%s has only unexported fields, which JSON drops", path)
	}
}

// typeString names t relative to the annotated package.
func (c *encodabilityChecker) typeString(t types.Type) string {
	return types.TypeString(t, types.RelativeTo(c.pkg))
}

// marshalsItself reports types that encode and decode themselves, as JSON
// or as text.
func marshalsItself(t *types.Named) bool {
	has := func(name string) bool {
		obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, t.Obj().Pkg(), name)
		_, isFunc := obj.(*types.Func)
		return isFunc
	}
	return (has("MarshalJSON") && has("UnmarshalJSON")) || (has("MarshalText") && has("UnmarshalText"))
}

// mapKeyOK reports key types encoding/json accepts: strings, integers and
// text marshalers.
func mapKeyOK(k types.Type) bool {
	if named, ok := types.Unalias(k).(*types.Named); ok && marshalsItself(named) {
		return true
	}
	b, ok := k.Underlying().(*types.Basic)
	return ok && b.Info()&(types.IsString|types.IsInteger) != 0
}

// kindName names a type's kind for messages.
func kindName(t types.Type) string {
	switch t.(type) {
	case *types.Basic:
		return "basic"
	case *types.Interface:
		return "interface"
	case *types.Map:
		return "map"
	case *types.Slice:
		return "slice"
	case *types.Array:
		return "array"
	case *types.Pointer:
		return "pointer"
	case *types.Signature:
		return "function"
	case *types.Chan:
		return "channel"
	}
	return "non-struct"
}
