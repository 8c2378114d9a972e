package endpoint

// Configurer is a type that some of the run's --extra-inputs configure
// rather than go into the body: the raw and template types' response_field
// (where the answer is) and the template's payload_template.
type Configurer interface {
	// Configure returns the type as extra configures it and the extras
	// left to send.
	Configure(extra []Field) (Type, []Field, error)
}

// Configure returns k's type as the run's extras configure it, and the
// extras left to send (all of them for most types).
func Configure(k Kind, extra []Field) (Type, []Field, error) {
	t := k.Type()
	if c, ok := t.(Configurer); ok {
		return c.Configure(extra)
	}
	return t, extra, nil
}
