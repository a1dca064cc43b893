"""Message templates: placeholders, fallbacks, braces, and refusals that say where."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.templates import (
    MAX_TEMPLATE,
    MissingValue,
    TemplateError,
    field_key,
    parse_template,
)


def render(text: str, **values: str) -> str:
    return parse_template(text).render(
        {field_key(k.replace("_", " ")): v for k, v in values.items()}
    )


def test_a_placeholder_takes_the_recipients_value() -> None:
    assert render("Hi {first name}, see you", first_name="Zoë") == "Hi Zoë, see you"


def test_field_names_match_in_any_letter_case_and_spacing() -> None:
    assert render("Hi {First  NAME}", first_name="Nguyễn") == "Hi Nguyễn"


def test_a_missing_value_takes_the_fallback() -> None:
    assert render("Hi {first name|there}!") == "Hi there!"


def test_a_blank_value_takes_the_fallback() -> None:
    assert render("Hi {first name|there}!", first_name="") == "Hi there!"


def test_an_empty_fallback_writes_nothing() -> None:
    assert render("Dear {title|}{name}", name="Kim") == "Dear Kim"


def test_a_missing_value_without_fallback_names_the_field() -> None:
    with pytest.raises(MissingValue) as missing:
        render("Hi {first name}, your {clinic} visit", first_name="Ann")
    assert missing.value.placeholder.name == "clinic"
    assert str(missing.value) == "no value for {clinic}"


def test_doubled_braces_write_braces() -> None:
    assert render("{{code}} is {{{name}}}", name="x") == "{code} is {x}"


def test_an_unclosed_brace_is_refused_with_its_position() -> None:
    with pytest.raises(TemplateError) as refused:
        parse_template("Hi {first name, welcome")
    assert refused.value.position == 4
    assert "never closed" in refused.value.reason


def test_a_brace_opened_inside_a_placeholder_is_refused_at_the_first() -> None:
    with pytest.raises(TemplateError) as refused:
        parse_template("Hi {name {clinic}")
    assert refused.value.position == 4
    assert "character 10" in refused.value.reason


def test_an_empty_name_is_refused_with_its_position() -> None:
    with pytest.raises(TemplateError) as refused:
        parse_template("Code: {  |x} ok")
    assert refused.value.position == 7
    assert "no field name" in refused.value.reason


def test_a_closing_brace_that_closes_nothing_is_refused() -> None:
    with pytest.raises(TemplateError) as refused:
        parse_template("Smile :}")
    assert refused.value.position == 8
    assert "}}" in refused.value.reason


def test_a_control_character_in_a_placeholder_is_refused_by_code_point() -> None:
    with pytest.raises(TemplateError) as refused:
        parse_template("Hi {na\x1bme}")
    assert refused.value.position == 7
    assert "U+001B" in refused.value.reason


def test_an_overlong_field_name_is_refused() -> None:
    with pytest.raises(TemplateError, match="longer than 64"):
        parse_template("{" + "n" * 65 + "}")


def test_a_template_too_long_to_be_a_message_is_refused_before_parsing() -> None:
    with pytest.raises(TemplateError, match="at most 10,000"):
        parse_template("{" * (MAX_TEMPLATE + 1))


def test_fields_lists_each_key_once_in_order() -> None:
    template = parse_template("{B} {a} {b|x} {C}")
    assert template.fields == ("b", "a", "c")
    assert [p.name for p in template.required()] == ["B", "a", "C"]


def test_merged_names_the_values_taken_from_the_recipient_only() -> None:
    template = parse_template("{name} at {clinic|Glebe}")
    used = template.merged({"name": "Zoë"})
    assert [(p.name, v) for p, v in used] == [("name", "Zoë")]


# ---- properties over hostile text --------------------------------------------------------


def escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


@given(st.text(max_size=300))
def test_any_text_with_its_braces_doubled_renders_as_itself(text: str) -> None:
    template = parse_template(escaped(text))
    assert not template.personal
    assert template.render({}) == text


@given(st.text(alphabet=st.sampled_from("{}|ab \x00\n"), max_size=60))
def test_any_text_parses_or_is_refused_with_a_position_inside_it(text: str) -> None:
    try:
        template = parse_template(text)
    except TemplateError as refused:
        position = refused.position
    else:
        assert isinstance(template.render(dict.fromkeys(template.fields, "v")), str)
        return
    assert 1 <= position <= len(text)


names = st.text(alphabet="abcdefgh XYZ", min_size=1, max_size=12).filter(lambda s: s.strip())
values = st.text(max_size=20)
segments = st.lists(
    st.tuples(st.text(max_size=20), names, values),
    max_size=6,
)


@given(segments, st.text(max_size=20))
def test_rendering_puts_each_value_where_its_placeholder_was(
    parts: list[tuple[str, str, str]], tail: str
) -> None:
    # One value per field: a field used twice takes the last value given, as a dict would.
    chosen = {field_key(name): value for _, name, value in parts}
    source = "".join(f"{escaped(text)}{{{name}|-}}" for text, name, _ in parts) + escaped(tail)
    expected = "".join(f"{text}{chosen[field_key(name)] or '-'}" for text, name, _ in parts)
    assert parse_template(source).render(chosen) == expected + tail
