package a2a_test

import (
	"testing"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/a2a/storetest"
)

func TestMemoryStoreContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) a2a.TaskStore { return a2a.NewMemoryStore(0, 0) }, nil)
}
