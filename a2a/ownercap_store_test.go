package a2a_test

import (
	"testing"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/a2a/storetest"
)

func TestMemoryStoreOwnerShare(t *testing.T) {
	storetest.RunOwnerShare(t, func(t *testing.T, maxTasks, maxOwnerTasks int) a2a.TaskStore {
		m, err := a2a.NewMemoryStoreWith(a2a.MemoryStoreOptions{MaxTasks: maxTasks, MaxOwnerTasks: maxOwnerTasks})
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}
