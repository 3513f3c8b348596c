package server

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// decodableKeys calls add with every key the config decoder accepts below
// t, walking as it does: mappings by their yaml tags, lists of mappings
// element by element (spelled key[]).
func decodableKeys(t reflect.Type, prefix string, add func(key string, mapping bool)) {
	for name, i := range configFields(t) {
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		switch ft := t.Field(i).Type; {
		case ft.Kind() == reflect.Struct:
			add(key, true)
			decodableKeys(ft, key, add)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			add(key, false)
			decodableKeys(ft.Elem(), key+"[]", add)
		default:
			add(key, false)
		}
	}
}

// TestConfigReferenceListsEveryKey: docs/configuration.md has a row for
// every key the decoder accepts, and names every mapping.
func TestConfigReferenceListsEveryKey(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	doc := string(b)
	n := 0
	decodableKeys(reflect.TypeFor[Config](), "", func(key string, mapping bool) {
		n++
		if mapping {
			require.True(t, strings.Contains(doc, "`"+key+"."),
				"docs/configuration.md never names mapping %s; run go generate ./server/...", key)
			return
		}
		require.True(t, strings.Contains(doc, "| `"+key+"` |"),
			"docs/configuration.md has no row for %s; run go generate ./server/...", key)
	})
	require.Greater(t, n, 100, "the walk found too few keys to be the decoder's")
}

// TestConfigRulesNameRealKeys: a rule for a misspelt key would check and
// document nothing.
func TestConfigRulesNameRealKeys(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	decodableKeys(reflect.TypeFor[Config](), "", func(key string, mapping bool) { keys[key] = !mapping })
	for key := range configRules {
		require.True(t, keys[key], "configRules names %q, which is not a key of Config", key)
	}
}

// TestConfigRangesAreEnforced: for every range in configRules, Validate
// refuses the values just outside it and accepts its bounds.
func TestConfigRangesAreEnforced(t *testing.T) {
	t.Parallel()
	for key, r := range configRules {
		if !r.hasMin && !r.hasMax {
			continue
		}
		var outside, inside []int64
		if r.hasMin {
			if r.above {
				outside, inside = append(outside, r.min), append(inside, r.min+1)
			} else {
				outside, inside = append(outside, r.min-1), append(inside, r.min)
			}
		}
		if r.hasMax {
			outside, inside = append(outside, r.max+1), append(inside, r.max)
		}
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			refusal := key + ": must be " + r.Range()
			for _, v := range outside {
				c := everyCheckOn()
				setKey(t, &c, key, v)
				require.ErrorContains(t, c.Validate(), refusal, "value %d", v)
			}
			for _, v := range inside {
				c := everyCheckOn()
				setKey(t, &c, key, v)
				if err := c.Validate(); err != nil {
					require.NotContains(t, err.Error(), refusal, "value %d", v)
				}
			}
		})
	}
}

// everyCheckOn is a valid config whose conditional sections (ssh,
// kubernetes) are validated too.
func everyCheckOn() Config {
	c := validConfig()
	c.Workspace.VolumeType = "kubernetes"
	c.SSH.Listen, c.SSH.HostKeyPath = "127.0.0.1:0", "/tmp/host_key"
	c.SSH.AuthorizedKeys = []SSHKeyConfig{{Name: "alice", Key: testSSHKey, Scopes: []string{"read"}}}
	return c
}

// setKey sets the numeric key of c, a dotted path, to v.
func setKey(t *testing.T, c *Config, key string, v int64) {
	f := reflect.ValueOf(c).Elem()
	for _, name := range strings.Split(key, ".") {
		list := strings.HasSuffix(name, "[]")
		i, ok := configFields(f.Type())[strings.TrimSuffix(name, "[]")]
		require.True(t, ok, "no key %s", key)
		f = f.Field(i)
		if list { // the key of a list's entries: set in its first
			if f.Len() == 0 {
				f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem())))
			}
			f = f.Index(0)
		}
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int64:
		f.SetInt(v)
	case reflect.Float64:
		f.SetFloat(float64(v))
	default:
		t.Fatalf("%s is a %s, not a number", key, f.Kind())
	}
}
