package keys

// State is an action as one context offers it right now.
type State struct {
	Action
	Enabled bool
	Reason  string // why it is disabled: toasted when pressed, dimmed in help
	Hidden  bool   // read-only mode: neither hinted nor listed as usable
}

// Context is the set of bindings a screen (or the root) offers now; it
// feeds the hint line, the help overlay and the disabled-key toasts.
type Context struct {
	Name     string
	Bindings []State
}

// Enabled returns the states of a scope with every action enabled.
func (m *Map) Enabled(s Scope) []State {
	acts := m.InScope(s)
	out := make([]State, len(acts))
	for i, a := range acts {
		out[i] = State{Action: a, Enabled: true}
	}
	return out
}

// Find returns the state of id in the context.
func (c Context) Find(id ID) (State, bool) {
	for _, b := range c.Bindings {
		if b.ID == id {
			return b, true
		}
	}
	return State{}, false
}

// Disable marks id disabled with a reason, unless it already is.
func (c Context) Disable(id ID, reason string) {
	for i := range c.Bindings {
		if c.Bindings[i].ID == id && c.Bindings[i].Enabled {
			c.Bindings[i].Enabled = false
			c.Bindings[i].Reason = reason
		}
	}
}

// ReadOnly hides and disables every mutating action.
func (c Context) ReadOnly() {
	for i := range c.Bindings {
		if c.Bindings[i].Mutates {
			c.Bindings[i].Enabled = false
			c.Bindings[i].Hidden = true
			c.Bindings[i].Reason = "read-only mode"
		}
	}
}
