// Command decode-stream reads newline-delimited JSON-RPC from standard
// input with the decoder alone (no server), and prints one line per
// message: its kind, method and id, or the JSON-RPC error it would get.
// A line too long or not JSON costs that line only.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/rpcedge/rpcedge/decode"
)

func main() {
	f, err := decode.NewFramer(os.Stdin, decode.Options{MaxBytes: 64 << 10})
	if err != nil {
		log.Fatal(err)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var m decode.Message // reused: decoding allocates nothing
	for {
		err := f.Next(&m)
		var de *decode.Error
		switch {
		case err == nil:
			fmt.Fprintf(out, "%s %s id=%s\n", m.Kind, m.Method, m.ID)
		case errors.As(err, &de):
			fmt.Fprintf(out, "error %d: %s (id %s)\n", de.Code, de.Reason, m.AnswerID())
		case err == io.EOF:
			return
		default:
			log.Fatal(err)
		}
	}
}
