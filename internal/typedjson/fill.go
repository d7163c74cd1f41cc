// Package typedjson turns miles-ci's JSON answers into the Dagger module's
// typed result objects, one generic way: an object's field is its JSON key
// camel-cased as Dagger names fields (est_time: EstTime, estTime to a
// caller), a list is a list, an object a nested object, and a JSON object
// of free keys (a map) a list of name/value entries. Generate writes the
// module's types from the Go types the answers are encoded from; Fill
// fills them from the encoded JSON, so the typed fields and the JSON (one
// field away, Json) are always one answer.
package typedjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// ItemsTag marks the field of a result object that holds a JSON array
// answer's items (`typedjson:"items"`); Dagger reads only json tags.
const ItemsTag = "items"

// OmitTag marks a field the module's object leaves out (`typedjson:"-"`):
// one its answers never hold, such as a real run's times in a type a dry
// run's answer shares.
const OmitTag = "-"

// JSONField is the result object's field that holds the answer's JSON,
// byte for byte.
const JSONField = "Json"

// FieldName is the Go field (Dagger camel-cases it for callers) of a JSON
// key: est_time is EstTime. Dagger reserves id on every object, so the key
// id is the field Index.
func FieldName(key string) string {
	if key == "id" {
		return "Index"
	}
	var b strings.Builder
	up := true
	for _, r := range key {
		if r == '_' || r == '-' || r == ' ' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Fill fills dst, a pointer to a result object, from js: every key of a
// JSON object must have its field (a key without one is an error, so a
// field added to an answer cannot go missing from the module quietly); a
// JSON array answer goes to the field tagged items. with sets the fields that are not the JSON's by their Go name
// (Json, Messages).
func Fill(dst any, js []byte, with map[string]any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("typedjson: fill wants a pointer to a struct, got %T", dst)
	}
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return fmt.Errorf("typedjson: %w", err)
	}
	s := v.Elem()
	if arr, ok := x.([]any); ok {
		f, ok := itemsField(s.Type())
		if !ok {
			return fmt.Errorf("typedjson: %s has no field tagged items for a JSON array", s.Type().Name())
		}
		if err := fill(s.FieldByIndex(f.Index), arr, f.Name); err != nil {
			return err
		}
	} else if err := fill(s, x, s.Type().Name()); err != nil {
		return err
	}
	for name, val := range with {
		f := s.FieldByName(name)
		if !f.IsValid() {
			return fmt.Errorf("typedjson: %s has no field %s", s.Type().Name(), name)
		}
		rv := reflect.ValueOf(val)
		if !rv.Type().AssignableTo(f.Type()) {
			return fmt.Errorf("typedjson: %s.%s is %s, not %s", s.Type().Name(), name, f.Type(), rv.Type())
		}
		f.Set(rv)
	}
	return nil
}

func itemsField(t reflect.Type) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); f.Tag.Get("typedjson") == ItemsTag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// fill sets v from the decoded JSON value x; at names where it is, for errors.
func fill(v reflect.Value, x any, at string) error {
	if x == nil {
		return nil
	}
	bad := func() error { return fmt.Errorf("typedjson: %s is %s, the JSON holds %T", at, v.Type(), x) }
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		if err := fill(e.Elem(), x, at); err != nil {
			return err
		}
		v.Set(e)
	case reflect.Struct:
		obj, ok := x.(map[string]any)
		if !ok {
			return bad()
		}
		for k, val := range obj {
			name := FieldName(k)
			f, ok := v.Type().FieldByName(name)
			if !ok || !f.IsExported() || name == JSONField {
				return fmt.Errorf("typedjson: %s has no field %s for the key %q", v.Type().Name(), name, k)
			}
			if err := fill(v.FieldByIndex(f.Index), val, at+"."+k); err != nil {
				return err
			}
		}
	case reflect.Slice:
		switch xs := x.(type) {
		case []any:
			s := reflect.MakeSlice(v.Type(), len(xs), len(xs))
			for i, e := range xs {
				if err := fill(s.Index(i), e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
			v.Set(s)
		case map[string]any:
			// A map: name/value entries in key order, as encoding/json writes a map.
			keys := make([]string, 0, len(xs))
			for k := range xs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			s := reflect.MakeSlice(v.Type(), len(keys), len(keys))
			for i, k := range keys {
				if err := fill(s.Index(i), map[string]any{"name": k, "value": xs[k]}, at+"."+k); err != nil {
					return err
				}
			}
			v.Set(s)
		default:
			return bad()
		}
	case reflect.String:
		s, ok := x.(string)
		if !ok {
			return bad()
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return bad()
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, ok := x.(json.Number)
		if !ok {
			return bad()
		}
		i, err := n.Int64()
		if err != nil {
			return fmt.Errorf("typedjson: %s is an integer, the JSON holds %s", at, n)
		}
		v.SetInt(i)
	case reflect.Float64:
		n, ok := x.(json.Number)
		if !ok {
			return bad()
		}
		f, err := n.Float64()
		if err != nil {
			return bad()
		}
		v.SetFloat(f)
	default:
		return bad()
	}
	return nil
}
