package pgstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore"
)

// A program that keeps its conversations in PostgreSQL opens the store once
// and hands it to history; a short operation timeout makes a database that
// stops answering an error the program sees, not a hang.
func ExampleOpen() {
	ctx := context.Background()
	st, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), pgstore.WithTimeout(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	convs, err := st.List()
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range convs {
		fmt.Println(c.ID, c.Title)
	}
	_ = history.Store(st)
}

// Another program (an indexer, a notifier) learns of every append without
// polling: each append's transaction notifies AppendsChannel with
// "<epoch> <seq> <size> <id>".
func Example_appends() {
	ctx := context.Background()
	st, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	conn, err := st.Pool().Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+pgstore.AppendsChannel); err != nil {
		log.Fatal(err)
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			log.Fatal(err)
		}
		f := strings.Fields(n.Payload)
		fmt.Println("conversation", f[len(f)-1], "reached sequence", f[1])
	}
}
