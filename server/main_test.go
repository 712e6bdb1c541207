package server_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/researchd/researchd/openapi"
	"github.com/researchd/researchd/server/servertest"
)

// TestMain fails a full run of this package when an operation of the document was never exercised.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" {
		doc, err := openapi.Load()
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		if missing := servertest.Coverage.Missing(doc); len(missing) > 0 {
			fmt.Printf("FAIL: %d operations of openapi/v2.json were never exercised by a test: %v\n", len(missing), missing)
			code = 1
		}
	}
	os.Exit(code)
}
