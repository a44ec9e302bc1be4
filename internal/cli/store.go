package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore"
)

// storeFlag adds --store, the PostgreSQL database that holds conversations
// instead of the data folder.
func storeFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "store", "", "PostgreSQL database holding the conversations, postgres://… (default $FOLIO_DATABASE_URL; without one, the data folder)")
}

// storeURL is --store, else $FOLIO_DATABASE_URL, else "" (the data folder).
func storeURL(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv("FOLIO_DATABASE_URL")
}

// openStore opens the PostgreSQL store url names, migrating its schema; a
// url that is not postgres://… is a usage mistake.
func openStore(cmd *cobra.Command, url string) (*pgstore.Store, error) {
	if !pgstore.IsURL(url) {
		return nil, usage(cmd, "--store (or FOLIO_DATABASE_URL) must be a postgres:// URL, got %q", redactURL(url))
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		return nil, failure(cmd, fmt.Errorf("%s: %w", redactURL(url), err))
	}
	return s, nil
}

// redactURL drops a password from a database URL for messages.
func redactURL(u string) string {
	at := strings.LastIndexByte(u, '@')
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	cred := u[scheme+3 : at]
	if i := strings.IndexByte(cred, ':'); i >= 0 {
		return u[:scheme+3] + cred[:i] + ":…" + u[at:]
	}
	return u
}

// readConversation reads ARG: a log file, or a conversation ID, which is
// looked up in the store when one is configured, else in the data folder
// dataDir (see resolveLogArg); a path to an existing file is read as a file
// either way. It returns the conversation, the log's exact bytes and the
// name to show.
func readConversation(cmd *cobra.Command, arg, store, dataDir string) (*history.Conversation, []byte, string, error) {
	url := storeURL(store)
	if _, err := os.Stat(arg); url == "" || err == nil {
		path, err := resolveLogArg(cmd, arg, dataDir)
		if err != nil {
			return nil, nil, arg, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, path, failure(cmd, err)
		}
		c, err := history.ReadStore(singleFile{path, data}, strings.TrimSuffix(filepath.Base(path), ".jsonl"))
		if err != nil {
			return nil, nil, path, failure(cmd, err)
		}
		return c, data, path, nil
	}
	s, err := openStore(cmd, url)
	if err != nil {
		return nil, nil, arg, err
	}
	defer s.Close()
	data, name, err := s.ReadLog(arg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, arg, failure(cmd, fmt.Errorf("no conversation %q in %s", arg, redactURL(url)))
	}
	if err != nil {
		return nil, nil, arg, failure(cmd, err)
	}
	c, err := history.ReadStore(singleFile{name, data}, arg)
	if err != nil {
		return nil, nil, name, failure(cmd, err)
	}
	return c, data, name, nil
}

// singleFile is a log already read, as a read-only Store of one, so every
// reader goes through history.ReadStore.
type singleFile struct {
	name string
	data []byte
}

func (f singleFile) ReadLog(string) ([]byte, string, error) { return f.data, f.name, nil }
func (singleFile) Open(string) (history.Medium, error)      { return nil, errors.ErrUnsupported }
func (singleFile) List() ([]history.Summary, error)         { return nil, errors.ErrUnsupported }
func (singleFile) Delete(string) error                      { return errors.ErrUnsupported }
func (singleFile) Close() error                             { return nil }
func (singleFile) PutBlob(string, history.Blob, []byte) (history.Blob, error) {
	return history.Blob{}, errors.ErrUnsupported
}
func (singleFile) GetBlob(string, history.BlobKind, string) (history.Blob, []byte, error) {
	return history.Blob{}, nil, errors.ErrUnsupported
}
func (singleFile) DeleteBlob(string, history.BlobKind, string) error { return errors.ErrUnsupported }
func (singleFile) ListBlobs(string) ([]history.Blob, error)          { return nil, errors.ErrUnsupported }

func init() { register("log", newLogImportCmd) }

func newLogImportCmd(stdio IO) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "import --to postgres://… FILES|DIR",
		Short: "Copy conversation logs into PostgreSQL, idempotently",
		Long: "Copy log files into a PostgreSQL store, byte for byte, each under its file name's ID, with its command receipts, " +
			"and the attachments and artifacts its data folder holds for it. " +
			"A DIR is a data folder (its conversations/) or a folder of .jsonl files. Running it again changes nothing; a log that grew since is appended to; " +
			"a conversation the store holds differently is refused and left as it is.",
		Example: `folio log import --to postgres://folio@db/folio ~/.local/share/folio
folio log import --to "$FOLIO_DATABASE_URL" conversations/20260304-050607-a1b2c3.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usage(cmd, "want FILES or a DIR to import")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return logImport(cmd, to, args, stdio) },
	}
	cmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database, postgres://… (default $FOLIO_DATABASE_URL)")
	return cmd
}

// importFiles expands FILES|DIR into the logs to import, by ID.
func importFiles(args []string) ([]history.LogFile, error) {
	var out []history.LogFile
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, history.LogFile{ID: strings.TrimSuffix(filepath.Base(a), ".jsonl"), Path: a})
			continue
		}
		data := a
		if filepath.Base(a) == "conversations" {
			data = filepath.Dir(a)
		}
		if _, err := os.Stat(history.ConversationsDir(data)); err == nil {
			logs, err := history.Logs(data)
			if err != nil {
				return nil, err
			}
			out = append(out, logs...)
			continue
		}
		des, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		for _, de := range des {
			if n := de.Name(); de.Type().IsRegular() && strings.HasSuffix(n, ".jsonl") && !strings.HasPrefix(n, ".") {
				out = append(out, history.LogFile{ID: strings.TrimSuffix(n, ".jsonl"), Path: filepath.Join(a, n)})
			}
		}
	}
	return out, nil
}

func logImport(cmd *cobra.Command, to string, args []string, stdio IO) error {
	url := storeURL(to)
	if url == "" {
		return usage(cmd, "--to is required (a postgres:// URL), or set FOLIO_DATABASE_URL")
	}
	files, err := importFiles(args)
	if err != nil {
		return failure(cmd, err)
	}
	s, err := openStore(cmd, url)
	if err != nil {
		return err
	}
	defer s.Close()
	var failed, created, appended, same, blobs, blobsSame int
	for _, f := range files {
		res, br, err := importOne(s, f)
		blobs, blobsSame = blobs+br.Copied, blobsSame+br.Same
		leftOut(stdio, f.Path, br)
		switch {
		case err != nil:
			failed++
			fmt.Fprintf(stdio.Err, "folio: %s: %v\n", f.Path, err)
			continue
		case res.Created:
			created++
		case res.Appended:
			appended++
		default:
			same++
		}
		if res.Torn > 0 {
			fmt.Fprintf(stdio.Err, "folio: %s: left out an unfinished last line (%d bytes), as readers do\n", f.Path, res.Torn)
		}
	}
	fmt.Fprintf(stdio.Out, "imported %d log(s) into %s: %d new, %d appended to, %d already there; attachments and artifacts: %d copied, %d already there\n",
		created+appended+same, redactURL(url), created, appended, same, blobs, blobsSame)
	if failed > 0 {
		return ExitError{Code: 1, Msg: fmt.Sprintf("log import: %d of %d log(s) were not imported", failed, len(files))}
	}
	return nil
}

// importOne imports one log with its receipts, then the attachments and
// artifacts its data folder holds for it (none for a log outside one).
func importOne(s history.Store, f history.LogFile) (res history.ImportResult, br history.CopyResult, err error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return res, br, err
	}
	cmds, err := os.ReadFile(history.CommandsPath(f.Path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, br, err
	}
	res, err = history.Import(s, f.ID, data, cmds)
	if err != nil {
		return res, br, err
	}
	if dir := dataFolderOf(f.Path); dir != "" {
		br, err = history.CopyBlobs(history.Files{Dir: dir}, s, f.ID)
		if err != nil {
			err = fmt.Errorf("attachments and artifacts: %w", err)
		}
	}
	return res, br, err
}

// leftOut tells of the blobs a copy left out as too large.
func leftOut(stdio IO, where string, br history.CopyResult) {
	for _, b := range br.TooLarge {
		fmt.Fprintf(stdio.Err, "folio: %s: left out %s %s: %d bytes, over what the store keeps\n", where, b.Kind, b.Name, b.Size)
	}
}

// dataFolderOf is the data folder a log file is in (conversations/<id>.jsonl,
// or Jazz's conversations/<agent>/<id>.jsonl), or "" for a log elsewhere.
func dataFolderOf(path string) string {
	dir := filepath.Dir(path)
	for range 2 {
		if filepath.Base(dir) == "conversations" {
			return filepath.Dir(dir)
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// exportTo copies conversation id out of the database at url into the data
// folder dir, as import copies it in: its log (exactly, and again changes
// nothing), receipts, attachments and artifacts.
func exportTo(cmd *cobra.Command, url, id, dir string, stdio IO) error {
	s, err := openStore(cmd, url)
	if err != nil {
		return err
	}
	defer s.Close()
	data, _, err := s.ReadLog(id)
	if errors.Is(err, fs.ErrNotExist) {
		return failure(cmd, fmt.Errorf("no conversation %q in %s", id, redactURL(url)))
	}
	if err != nil {
		return failure(cmd, err)
	}
	cmds, err := s.Commands(id)
	if err != nil {
		return failure(cmd, err)
	}
	to := history.Files{Dir: dir}
	res, err := history.Import(to, id, data, cmds)
	if err != nil {
		return failure(cmd, err)
	}
	br, err := history.CopyBlobs(s, to, id)
	leftOut(stdio, id, br)
	if err != nil {
		return failure(cmd, fmt.Errorf("attachments and artifacts: %w", err))
	}
	what := "already there"
	switch {
	case res.Created:
		what = "new"
	case res.Appended:
		what = "appended to"
	}
	fmt.Fprintf(stdio.Out, "exported %s into %s: log %s; attachments and artifacts: %d copied, %d already there\n", id, dir, what, br.Copied, br.Same)
	return nil
}

// writeRaw writes a log's exact bytes (folio log export --format log).
func writeRaw(w io.Writer, data []byte) error {
	_, err := w.Write(data)
	return err
}
