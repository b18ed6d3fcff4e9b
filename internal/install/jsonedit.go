package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// JSON configs are edited on hujson's syntax tree, so every byte of the
// user's file outside our one member (comments, key order, indentation,
// trailing commas) stays as it was. Our member goes first in its object:
// a comment that trails the opening brace stays on that line, and one that
// leads the next member stays with it.

// jsonDoc is a parsed JSON (or JSONC) config file.
type jsonDoc struct {
	root hujson.Value
	unit string // one level of indentation, as the file uses it
}

func parseJSON(b []byte) (*jsonDoc, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}\n")
	}
	v, err := hujson.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("the top level is a JSON %s, not an object", kindName(v.Value.Kind()))
	}
	d := &jsonDoc{root: v, unit: "  "}
	if m := v.Value.(*hujson.Object).Members; len(m) > 0 {
		if ind := lastLineIndent(m[0].Name.BeforeExtra); ind != "" {
			d.unit = ind
		}
	}
	return d, nil
}

func kindName(k hujson.Kind) string {
	switch k {
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	}
	return "literal"
}

func (d *jsonDoc) bytes() []byte { return d.root.Pack() }

// object walks path from the root; nil when a step is missing. A step that
// exists but is not an object is an error: we never replace user data.
func (d *jsonDoc) object(path []string) (*hujson.Object, error) {
	obj := d.root.Value.(*hujson.Object)
	for i, k := range path {
		m := member(obj, k)
		if m < 0 {
			return nil, nil
		}
		next, ok := obj.Members[m].Value.Value.(*hujson.Object)
		if !ok {
			return nil, fmt.Errorf("%q is a JSON %s, not an object", strings.Join(path[:i+1], "."), kindName(obj.Members[m].Value.Value.Kind()))
		}
		obj = next
	}
	return obj, nil
}

func member(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// get returns the member name of the object at path, decoded, or nil.
func (d *jsonDoc) get(path []string, name string) (map[string]any, bool, error) {
	obj, err := d.object(path)
	if err != nil || obj == nil {
		return nil, false, err
	}
	i := member(obj, name)
	if i < 0 {
		return nil, false, nil
	}
	v := obj.Members[i].Value.Clone()
	v.Standardize()
	var out map[string]any
	if err := json.Unmarshal(v.Pack(), &out); err != nil {
		return nil, true, fmt.Errorf("%q is not an object", name)
	}
	return out, true, nil
}

// set puts value under name in the object at path, creating the objects on
// the way, or replaces the member's value in place when it is there.
func (d *jsonDoc) set(path []string, name string, value any) error {
	obj := d.root.Value.(*hujson.Object)
	depth := 1
	for i, k := range path {
		if m := member(obj, k); m >= 0 {
			next, ok := obj.Members[m].Value.Value.(*hujson.Object)
			if !ok {
				return fmt.Errorf("%q is a JSON %s, not an object", k, kindName(obj.Members[m].Value.Value.Kind()))
			}
			obj, depth = next, depth+1
			continue
		}
		// Create the rest of the path in one member.
		var rest any = ordered{{name, value}}
		for j := len(path) - 1; j > i; j-- {
			rest = ordered{{path[j], rest}}
		}
		return d.insertFirst(obj, depth, k, rest)
	}
	if i := member(obj, name); i >= 0 {
		v, err := d.render(value, d.indentOf(obj, depth))
		if err != nil {
			return err
		}
		v.BeforeExtra = obj.Members[i].Value.BeforeExtra
		v.AfterExtra = obj.Members[i].Value.AfterExtra
		obj.Members[i].Value = v
		return nil
	}
	return d.insertFirst(obj, depth, name, value)
}

// indentOf is the indentation of obj's members (obj at nesting depth).
func (d *jsonDoc) indentOf(obj *hujson.Object, depth int) string {
	if len(obj.Members) > 0 {
		if ind := lastLineIndent(obj.Members[0].Name.BeforeExtra); ind != "" || bytes.Contains(obj.Members[0].Name.BeforeExtra, []byte("\n")) {
			return ind
		}
	}
	return strings.Repeat(d.unit, depth)
}

func (d *jsonDoc) insertFirst(obj *hujson.Object, depth int, name string, value any) error {
	indent := d.indentOf(obj, depth)
	v, err := d.render(value, indent)
	if err != nil {
		return err
	}
	v.BeforeExtra = hujson.Extra(" ")
	key := hujson.Value{Value: hujson.String(name)}
	if len(obj.Members) == 0 {
		key.BeforeExtra = hujson.Extra("\n" + indent)
		if !bytes.Contains(obj.AfterExtra, []byte("\n")) {
			obj.AfterExtra = hujson.Extra("\n" + strings.Repeat(d.unit, depth-1))
		}
		obj.Members = []hujson.ObjectMember{{Name: key, Value: v}}
		return nil
	}
	// Split the first member's leading extra: what trails the opening
	// brace on its line stays there; the rest stays with that member.
	first := obj.Members[0].Name.BeforeExtra
	head, tail := first, hujson.Extra(nil)
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		head, tail = first[:i], first[i:]
	}
	key.BeforeExtra = hujson.Extra(string(head) + "\n" + indent)
	if tail == nil {
		tail = hujson.Extra("\n" + indent)
	}
	obj.Members[0].Name.BeforeExtra = tail
	obj.Members = append([]hujson.ObjectMember{{Name: key, Value: v}}, obj.Members...)
	return nil
}

// remove deletes name from the object at path, undoing insertFirst, then
// removes each object on the path that this left empty.
func (d *jsonDoc) remove(path []string, name string) (bool, error) {
	objs := []*hujson.Object{d.root.Value.(*hujson.Object)}
	for i := range path {
		o, err := d.object(path[:i+1])
		if err != nil || o == nil {
			return false, err
		}
		objs = append(objs, o)
	}
	if !removeMember(objs[len(objs)-1], name) {
		return false, nil
	}
	for i := len(path) - 1; i >= 0; i-- {
		o := objs[i+1]
		if len(o.Members) > 0 || len(bytes.TrimSpace(o.AfterExtra)) > 0 {
			break
		}
		removeMember(objs[i], path[i])
	}
	return true, nil
}

func removeMember(obj *hujson.Object, name string) bool {
	i := member(obj, name)
	if i < 0 {
		return false
	}
	gone := obj.Members[i]
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	switch {
	case len(obj.Members) == 0:
		if len(bytes.TrimSpace(obj.AfterExtra)) == 0 {
			obj.AfterExtra = nil
		}
	case i == 0:
		head := gone.Name.BeforeExtra
		if j := bytes.IndexByte(head, '\n'); j >= 0 {
			head = head[:j]
		}
		obj.Members[0].Name.BeforeExtra = append(append(hujson.Extra{}, head...), obj.Members[0].Name.BeforeExtra...)
	case i == len(obj.Members):
		obj.Members[i-1].Value.AfterExtra = gone.Value.AfterExtra // trailing comma as it was
	}
	return true
}

// render formats value as indented JSON whose closing brace sits at indent.
func (d *jsonDoc) render(value any, indent string) (hujson.Value, error) {
	b, err := json.MarshalIndent(value, indent, d.unit)
	if err != nil {
		return hujson.Value{}, err
	}
	return hujson.Parse(b)
}

func lastLineIndent(extra []byte) string {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return ""
	}
	rest := extra[i+1:]
	if len(bytes.Trim(rest, " \t")) != 0 {
		return ""
	}
	return string(rest)
}

// isEmptyObject reports a document that holds nothing: `{}` and blanks.
func (d *jsonDoc) isEmpty() bool {
	obj := d.root.Value.(*hujson.Object)
	return len(obj.Members) == 0 && len(bytes.TrimSpace(obj.AfterExtra)) == 0 &&
		len(bytes.TrimSpace(d.root.BeforeExtra)) == 0 && len(bytes.TrimSpace(d.root.AfterExtra)) == 0
}

// ordered is a JSON object that keeps its keys in the order written.
type ordered []field

type field struct {
	k string
	v any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
