"""Recipient files: encodings, delimiters, quoting, header and column, dedup, hostile files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from gwdesk.domain.spreadsheet import restored, safe_cell
from gwdesk.importing.decoding import MAX_FILE_BYTES, ImportCancelled, ImportFailed, decode
from gwdesk.importing.export import write_invalid_rows
from gwdesk.importing.recipients import (
    InvalidRow,
    RecipientList,
    check_pasted,
    check_table,
    import_file,
    load_table,
    table_from_bytes,
)
from gwdesk.importing.table import ALL_COLUMNS, Table, sniff_delimiter
from tests.unit.spreadsheet_support import (
    HOSTILE_CELLS,
    PLAIN_WITH_DELIMITERS,
    formulas_seen,
    read_back,
)

NAMES_AND_NUMBERS = "Name,Mobile\nJosé Müller,0412 345 678\nZoë Smith,+61 412 345 679\n"


def table(text: str, encoding: str = "utf-8") -> tuple[Table, RecipientList]:
    t = table_from_bytes(text.encode(encoding), "AU")
    return (t, check_table(t, t.column, "AU"))


def write(tmp_path: Path, data: bytes, name: str = "list.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# ---- encodings ---------------------------------------------------------------------------------


def test_plain_utf8_is_read_as_utf8() -> None:
    decoded = decode(NAMES_AND_NUMBERS.encode("utf-8"))
    assert decoded.encoding == "UTF-8"
    assert "José Müller" in decoded.text


def test_a_utf8_bom_is_named_and_not_part_of_the_first_cell() -> None:
    t = table_from_bytes(b"\xef\xbb\xbf" + NAMES_AND_NUMBERS.encode(), "AU")
    assert t.encoding == "UTF-8 with BOM"
    assert t.rows[0][0] == "Name"


@pytest.mark.parametrize(
    ("codec", "label"), [("utf-16", "UTF-16 LE with BOM"), ("utf-16-be", "UTF-16 BE")]
)
def test_utf16_files_are_read(codec: str, label: str) -> None:
    data = NAMES_AND_NUMBERS.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
        label = "UTF-16 BE with BOM"
    t = table_from_bytes(data, "AU")
    assert t.encoding == label
    assert t.rows[1] == ["José Müller", "0412 345 678"]


def test_utf16_without_a_bom_is_recognised_by_its_nul_bytes() -> None:
    decoded = decode(NAMES_AND_NUMBERS.encode("utf-16-le"))
    assert decoded.encoding == "UTF-16 LE"
    assert decoded.text == NAMES_AND_NUMBERS


def test_cp1252_names_are_read_as_windows_1252() -> None:
    data = "Name;Mobile\nJosé Müller – €;0412 345 678\n".encode("cp1252")
    t = table_from_bytes(data, "AU")
    assert t.encoding == "Windows-1252"
    assert t.rows[1][0] == "José Müller – €"


def test_a_utf8_bom_file_with_broken_bytes_says_where() -> None:
    with pytest.raises(ImportFailed, match="byte 7 is not valid"):
        decode(b"\xef\xbb\xbfabc\xff\xfe0412345678")


# ---- delimiters and quoting --------------------------------------------------------------------


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_each_delimiter_is_found_and_the_number_column_picked(delimiter: str) -> None:
    text = "".join(
        f"{name}{delimiter}{number}\n"
        for name, number in [("Name", "Mobile"), ("Ann", "0412 345 678"), ("Bo", "0412345679")]
    )
    t, checked = table(text)
    assert t.delimiter == delimiter
    assert t.column == 1
    assert checked.numbers == ("61412345678", "61412345679")


def test_a_delimiter_inside_quotes_does_not_split_the_cell() -> None:
    t, checked = table('"Smith, John",0412 345 678\n"O""Brien, Pat",0412 345 679\n')
    assert t.rows[0] == ["Smith, John", "0412 345 678"]
    assert t.rows[1][0] == 'O"Brien, Pat'
    assert len(checked.numbers) == 2


def test_a_quoted_cell_may_span_lines() -> None:
    t, checked = table('Name,Mobile\n"Ann\nSecond line",0412 345 678\nBo,0412 345 679\n')
    assert t.rows[1][0] == "Ann\nSecond line"
    assert len(checked.numbers) == 2


def test_semicolons_win_over_decimal_commas() -> None:
    assert sniff_delimiter("Name;Mobile;Owed\nAnn;0412345678;12,50\nBo;0412345679;3,00\n") == ";"


def test_a_single_column_has_no_delimiter() -> None:
    t, checked = table("0412 345 678\n(02) 9876 5432\n+61 412 345 679\n")
    assert t.delimiter is None
    assert checked.numbers == ("61412345678", "61298765432", "61412345679")


# ---- text kept as text -------------------------------------------------------------------------


def test_leading_zeros_and_plus_signs_are_kept_as_written() -> None:
    t, _ = table("Mobile,Home\n0412345678,+61298765432\n")
    assert t.rows[1] == ["0412345678", "+61298765432"]


# ---- header and column -------------------------------------------------------------------------


def test_a_header_row_is_recognised_and_not_counted_as_invalid() -> None:
    t, checked = table(NAMES_AND_NUMBERS)
    assert t.has_header
    assert t.column_names() == ["1: Name", "2: Mobile"]
    assert checked.invalid == ()


def test_a_file_without_a_header_starts_with_data() -> None:
    t, checked = table("Ann,0412 345 678\nBo,0412 345 679\n")
    assert not t.has_header
    assert len(checked.numbers) == 2


def test_a_lone_phone_header_above_numbers_is_a_header() -> None:
    t, checked = table("Phone\n0412 345 678\n")
    assert t.has_header
    assert checked.numbers == ("61412345678",)


def test_the_column_of_usable_numbers_wins_over_other_digit_columns() -> None:
    text = "Customer number,Name,Mobile\n10002345,Ann,0412 345 678\n10002346,Bo,0412 345 679\n"
    t, _ = table(text)
    assert t.column == 2


def test_numbers_written_across_lines_of_different_lengths_use_every_cell() -> None:
    t, checked = table("0412 345 678, 0412 345 679\n0412 345 670\n")
    assert t.column == ALL_COLUMNS
    assert len(checked.numbers) == 3


def test_one_giant_line_of_numbers_is_a_list_written_across() -> None:
    numbers = [f"04123{i:05d}" for i in range(5000)]
    t, checked = table(",".join(numbers) + "\n")
    assert t.column == ALL_COLUMNS
    assert len(checked.numbers) == 5000


def test_another_column_can_be_chosen() -> None:
    t, _ = table("Mobile,Home\n0412 345 678,(02) 9876 5432\n")
    assert check_table(t, 1, "AU").numbers == ("61298765432",)


# ---- normalising, dedup, invalid rows ----------------------------------------------------------


def test_the_same_number_in_three_formats_is_sent_once() -> None:
    _, checked = table("Mobile\n0412 345 678\n+61412345678\n61 412-345-678\n")
    assert checked.numbers == ("61412345678",)
    assert checked.duplicates == 2


def test_invalid_rows_are_listed_with_row_number_text_and_reason() -> None:
    _, checked = table("Name,Mobile\nAnn,0412 345 678\nBo,0412 345\nCy,call me\n")
    assert [(r.row, r.text) for r in checked.invalid] == [(3, "0412 345"), (4, "call me")]
    assert checked.invalid[0].reason == "not a valid number for AU"
    assert "contains 'c'" in checked.invalid[1].reason


def test_blank_lines_are_skipped_not_invalid() -> None:
    _, checked = table("Name,Mobile\nAnn,0412 345 678\n\n,\nBo,0412 345 679\n\n\n")
    assert checked.blank == 2
    assert checked.invalid == ()


def test_an_empty_cell_in_the_number_column_is_invalid() -> None:
    _, checked = table("Name,Mobile\nAnn,0412 345 678\nBo,\n")
    assert checked.invalid == (InvalidRow(3, "Bo,", "column 2 is empty"),)


def test_ragged_rows_too_short_for_the_column_are_listed() -> None:
    _, checked = table("Name,Mobile,Note\nAnn,0412 345 678,x\nBo\nCy,0412 345 679\n")
    assert checked.invalid == (InvalidRow(3, "Bo", "the row has 1 cell, so no column 2"),)
    assert len(checked.numbers) == 2


def test_a_formula_cell_is_text_listed_as_invalid_never_evaluated() -> None:
    _, checked = table("Name,Mobile\nEvil,=cmd|' /C calc'!A0\n")
    assert checked.invalid[0].text == "=cmd|' /C calc'!A0"
    assert "contains '='" in checked.invalid[0].reason


def test_pasted_numbers_split_on_lines_commas_and_semicolons() -> None:
    checked = check_pasted("0412 345 678, 0412 345 679\n\n0412345670; nope\n+61412345678", "AU")
    assert checked.numbers == ("61412345678", "61412345679", "61412345670")
    assert checked.duplicates == 1
    assert [(r.row, r.text) for r in checked.invalid] == [(3, "nope")]


def test_an_unknown_region_is_refused_clearly() -> None:
    with pytest.raises(ImportFailed, match="region 'XX'"):
        check_pasted("0412 345 678", "XX")


# ---- progress and cancel -----------------------------------------------------------------------


def test_progress_reaches_the_total() -> None:
    text = "Mobile\n" + "".join(f"04123{i:05d}\n" for i in range(10_000))
    seen: list[tuple[int, int]] = []
    t = table_from_bytes(text.encode(), "AU")
    check_table(t, 0, "AU", progress=lambda done, total: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] == 10_000
    assert len(seen) > 2


def test_a_cancelled_import_stops_with_import_cancelled() -> None:
    text = "Mobile\n" + "".join(f"04123{i:05d}\n" for i in range(10_000))
    t = table_from_bytes(text.encode(), "AU")
    with pytest.raises(ImportCancelled):
        check_table(t, 0, "AU", cancelled=lambda: True)


# ---- hostile files -----------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"   \r\n\n", b"\xef\xbb\xbf", b"\xff\xfe"])
def test_an_empty_file_is_refused_with_a_reason(data: bytes) -> None:
    with pytest.raises(ImportFailed, match="empty"):
        table_from_bytes(data, "AU")


def test_a_header_without_rows_says_so() -> None:
    with pytest.raises(ImportFailed, match="no rows of recipients"):
        table_from_bytes(b"Name,Mobile\n", "AU")


def test_random_binary_is_refused_as_not_text() -> None:
    data = bytes(range(256)) * 64
    with pytest.raises(ImportFailed, match="does not look like a text file"):
        table_from_bytes(data, "AU")


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"PK\x03\x04rest", "zip archive"),
        (b"%PDF-1.7\n", "PDF"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "Excel"),
    ],
)
def test_a_workbook_or_pdf_is_named_and_the_fix_given(data: bytes, what: str) -> None:
    with pytest.raises(ImportFailed, match=what) as caught:
        table_from_bytes(data, "AU")
    assert "save it as CSV" in caught.value.message


def test_a_few_nul_bytes_are_dropped_and_counted() -> None:
    t, checked = table("Mobile\n0412\x00345 678\n0412 345 679\n")
    assert t.nuls_removed == 1
    assert len(checked.numbers) == 2


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.csv"
    with path.open("wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: 100 MB without writing them
    with pytest.raises(ImportFailed, match="100 MB") as caught:
        load_table(path, "AU")
    assert f"{MAX_FILE_BYTES // 1_048_576} MB" in caught.value.message


def test_a_missing_file_says_it_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(ImportFailed, match="cannot be read"):
        load_table(tmp_path / "gone.csv", "AU")


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(ImportFailed, match="not a file"):
        load_table(tmp_path, "AU")


def test_one_giant_line_without_delimiters_is_refused() -> None:
    with pytest.raises(ImportFailed, match="longer than 131,072 characters"):
        table_from_bytes(b"A" * 300_000, "AU")


def test_an_unclosed_quote_swallowing_the_file_is_explained() -> None:
    data = b'Name,Mobile\n"Ann,0412345678\n' + b"Bo,0412345679\n" * 20_000
    with pytest.raises(ImportFailed, match="unclosed quote"):
        table_from_bytes(data, "AU")


def test_a_whole_file_imports_in_one_call(tmp_path: Path) -> None:
    path = write(tmp_path, NAMES_AND_NUMBERS.encode("utf-8-sig"))
    t, checked = import_file(path, "AU")
    assert t.encoding == "UTF-8 with BOM"
    assert checked.numbers == ("61412345678", "61412345679")


# ---- export ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("+1+cmd|x", "'+1+cmd|x"),
        ("\t=1", "\t'=1"),
        ("+61 412 345 678", "'+61 412 345 678"),
        ("0412-345-678", "0412-345-678"),
        ("Ann", "Ann"),
    ],
)
def test_export_escapes_formulas_and_keeps_signed_numbers_as_text(cell: str, shown: str) -> None:
    assert safe_cell(cell) == shown


def test_invalid_rows_export_to_a_csv_a_spreadsheet_opens_safely(tmp_path: Path) -> None:
    _, checked = table("Name,Mobile\nEvil,=cmd|' /C calc'!A0\nBo,0412 345\n")
    path = tmp_path / "invalid.csv"
    assert write_invalid_rows(path, checked.invalid) == 2
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    assert rows[0] == ["Row", "Entry", "Reason"]
    assert rows[1][:2] == ["2", "'=cmd|' /C calc'!A0"]
    assert rows[2][:2] == ["3", "0412 345"]


@pytest.mark.parametrize("entry", HOSTILE_CELLS)
def test_invalid_rows_export_runs_no_formula_whichever_delimiter_it_is_read_with(
    tmp_path: Path, entry: str
) -> None:
    path = tmp_path / "invalid.csv"
    write_invalid_rows(path, [InvalidRow(2, entry, "not a number")])
    text = path.read_text(encoding="utf-8-sig")
    assert formulas_seen(text) == []
    assert restored(read_back(text)[1][1]) == entry


def test_invalid_rows_export_keeps_text_with_delimiters_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "invalid.csv"
    write_invalid_rows(path, [InvalidRow(2, PLAIN_WITH_DELIMITERS, "not a number")])
    assert read_back(path.read_text(encoding="utf-8-sig"))[1][1] == PLAIN_WITH_DELIMITERS


def test_the_benchmark_prints_its_figures_as_one_json_object_last(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks.csv_import import main

    assert main(["--rows", "2000", "--runs", "1"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["rows"] == 2000
    assert figures["valid"] + figures["duplicates"] + figures["invalid"] == 2000
    assert figures["gwdesk_seconds"] > 0
    assert figures["naive_seconds"] > 0
