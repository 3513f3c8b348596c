// Package servicetest holds hand-written fakes of the ports that
// server/service consumes. Each fake is a struct of XxxFunc fields: a test
// sets only the ones its scenario reaches. A method whose field is nil
// returns an error naming it, so a call the test did not expect fails loudly
// instead of passing silently.
package servicetest

import "fmt"

// notSet is the error of a method whose function field is nil.
func notSet(method string) error {
	return fmt.Errorf("servicetest: %s not set", method)
}
