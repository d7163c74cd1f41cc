package policy

import "errors"

// CollectFile returns the registrations of one repo-relative test file below
// root, applying the tests/fast/ implicit-registration rule of rules §2.
func CollectFile(root, rel string) ([]Registration, error) {
	return nil, errors.New("policy.CollectFile: not implemented yet")
}
