package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// row is one dataset row's wanted columns: a string, or a list of strings.
type row map[string]any

// readRows reads the named columns of a Hugging Face dataset file: Parquet
// (what the Hub's parquet conversion holds), JSON Lines, or one JSON array
// of objects. A column a row lacks is absent from its map; a value that is
// neither text nor a list of text is too.
func readRows(path string, cols []string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if n == 4 && string(head) == "PAR1" {
		return parquetRows(f, cols)
	}
	return jsonRows(f, cols)
}

// parquetRows reads only the wanted columns' leaves.
func parquetRows(f *os.File, cols []string) ([]row, error) {
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("read Parquet: %w", err)
	}
	defer pf.Close()
	schema := pf.MetaData().Schema
	var leaves []int
	for i := 0; i < schema.NumColumns(); i++ {
		if p := schema.Column(i).ColumnPath(); len(p) > 0 && slices.Contains(cols, p[0]) {
			leaves = append(leaves, i)
		}
	}
	if len(leaves) == 0 {
		return nil, fmt.Errorf("the file has no column %q", strings.Join(cols, `", "`))
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("read Parquet: %w", err)
	}
	rr, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		return nil, fmt.Errorf("read Parquet: %w", err)
	}
	defer rr.Release()
	var rows []row
	for rr.Next() {
		rec := rr.RecordBatch()
		start := len(rows)
		for range rec.NumRows() {
			rows = append(rows, row{})
		}
		for c, fld := range rec.Schema().Fields() {
			col := rec.Column(c)
			for i := 0; i < int(rec.NumRows()); i++ {
				if v, ok := arrowValue(col, i); ok {
					rows[start+i][fld.Name] = v
				}
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read Parquet: %w", err)
	}
	return rows, nil
}

// arrowValue is a text cell, or a list of text cells.
func arrowValue(col arrow.Array, i int) (any, bool) {
	if col.IsNull(i) {
		return nil, false
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i), true
	case *array.LargeString:
		return a.Value(i), true
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		list := make([]string, 0, end-start)
		for k := start; k < end; k++ {
			v, ok := arrowValue(a.ListValues(), int(k))
			s, text := v.(string)
			if !ok || !text {
				return nil, false
			}
			list = append(list, s)
		}
		return list, true
	}
	return nil, false
}

// jsonRows reads a JSON array of objects, or one object per line.
func jsonRows(r io.Reader, cols []string) ([]row, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := firstByte(br)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(br)
	if first == '[' {
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	}
	var rows []row
	for n := 1; ; n++ {
		if first == '[' && !dec.More() {
			break
		}
		var obj map[string]json.RawMessage
		if err := dec.Decode(&obj); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("row %d: not a JSON object: %v", n, err)
		}
		rows = append(rows, jsonRow(obj, cols))
	}
	return rows, nil
}

func jsonRow(obj map[string]json.RawMessage, cols []string) row {
	r := row{}
	for _, c := range cols {
		var s string
		var list []string
		switch raw := obj[c]; {
		case raw == nil:
		case json.Unmarshal(raw, &s) == nil:
			r[c] = s
		case json.Unmarshal(raw, &list) == nil:
			r[c] = list
		}
	}
	return r
}

func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return 0, errors.New("the file is empty")
			}
			return 0, err
		}
		if b == 0xef { // a UTF-8 byte-order mark
			_, _ = br.Discard(2)
			continue
		}
		if !bytes.ContainsRune([]byte(" \t\r\n"), rune(b)) {
			return b, br.UnreadByte()
		}
	}
}
