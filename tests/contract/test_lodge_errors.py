"""Each Lodge error class from the sandbox's real answers, and refusals before any request."""

from __future__ import annotations

import random
from collections.abc import Awaitable
from pathlib import Path

import pytest

from gwdesk.domain.profile import LodgePort
from gwdesk.gateway.errors import (
    AmbiguousSendError,
    AuthenticationError,
    NotFoundError,
    RateLimitedError,
    TransientError,
    ValidationError,
)
from gwdesk.gateway.http import HttpSettings
from gwdesk.gateway.lodge.documents import LodgeSms, LodgeWap
from gwdesk.gateway.lodge.files import LodgeFile
from gwdesk.sandbox.server import SandboxThread
from tests.contract.lodge_client_support import (
    FAX,
    MOBILE,
    PORTS,
    files,
    gif,
    lodge_service,
    messages,
    pdf,
    png,
    sized,
)
from tests.contract.rest_support import endpoint_requests, set_faults

WRONG = "not-the-password"


@pytest.fixture(params=PORTS)
def port(request: pytest.FixtureRequest) -> LodgePort:
    return request.param  # type: ignore[no-any-return]


def first_hits_second_misses(rate: float) -> int:
    """A fault seed under which the first request is hit and the second is not."""
    return next(
        s for s in range(1000) if (r := random.Random(s)).random() < rate and r.random() >= rate
    )


def lodge_requests(sandbox: SandboxThread) -> int:
    return endpoint_requests(sandbox, "lodge") + endpoint_requests(sandbox, "wsdl")


# ---- the gateway's own answers --------------------------------------------------------------


async def test_a_wrong_password_is_an_authentication_error_for_every_kind_of_result(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port, password=WRONG) as service:
        lodge = service.lodge
        failures = [
            await _error(lodge.lodge_sms(MOBILE, "x")),
            await _error(lodge.lodge_sms_with_reply_xml(MOBILE, "x", "WWW", "site")),
            await _error(lodge.get_message_status_xml("20250101000000000000")),
            await _error(lodge.lodge_xml_by_arg([LodgeSms(MOBILE, "x")])),
        ]
    assert all(isinstance(f, AuthenticationError) for f in failures), failures
    assert all("invalid username or password" in f.message for f in failures)
    assert all(WRONG not in f.message and WRONG not in repr(f) for f in failures)
    assert messages(sandbox) == []


async def _error(call: Awaitable[object]) -> Exception:
    try:
        await call
    except Exception as exc:
        return exc
    raise AssertionError("the call succeeded")


async def test_a_value_the_gateway_refuses_is_a_validation_error_naming_the_field(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        with pytest.raises(ValidationError) as text_op:
            await service.lodge.lodge_sms_with_reply(MOBILE, "x", "HTTP", "not a url")
        with pytest.raises(ValidationError) as xml_op:
            await service.lodge.lodge_fax_xml(FAX, cover_page="c", subject="S" * 101)
    assert text_op.value.field == "ReplyPath"
    assert "http(s) URL" in text_op.value.message
    assert xml_op.value.field == "FaxSubject"
    assert messages(sandbox) == []


async def test_a_document_with_one_bad_message_lodges_the_others(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    batch = [
        LodgeSms(MOBILE, "first"),
        LodgeWap(MOBILE, "N" * 101, "https://example.com/"),
        LodgeSms(MOBILE, "third"),
    ]
    async with lodge_service(sandbox, port) as service:
        result = await service.lodge.lodge_xml_by_arg(batch)
    assert not result.ok
    assert result.lodged == 2
    [(number, failed)] = result.failed
    assert number == 2
    assert failed.result == 2
    assert failed.error_msg.startswith("Message 2: Subject")
    assert [r["message"] for r in messages(sandbox)] == ["first", "third"]


async def test_an_unknown_msgid_is_not_found(sandbox: SandboxThread, port: LodgePort) -> None:
    async with lodge_service(sandbox, port) as service:
        with pytest.raises(NotFoundError) as caught:
            await service.lodge.get_message_status_xml("20200101000000000000")
    assert "20200101000000000000" in caught.value.message


# ---- refused before any request -----------------------------------------------------------


async def test_a_fourth_attachment_is_refused_before_any_request(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    four = files(("a.png", png()), ("b.png", png()), ("c.gif", gif()), ("d.txt", b"d"))
    async with lodge_service(sandbox, port) as service:
        with pytest.raises(ValidationError) as caught:
            await service.lodge.send_mms(MOBILE, files=four)
    assert caught.value.field == "MMSContentBase64"
    assert "at most 3 files; 4 were given" in caught.value.message
    assert lodge_requests(sandbox) == 0


async def test_an_oversize_fax_is_refused_before_reading_or_sending(
    sandbox: SandboxThread, tmp_path: Path
) -> None:
    first, second = tmp_path / "a.pdf", tmp_path / "b.pdf"
    first.write_bytes(pdf())
    with second.open("wb") as stream:  # sparse: 10 MB on paper, nothing on disk
        stream.truncate(10_485_760 - len(pdf()) + 1)
    async with lodge_service(sandbox, "soap12") as service:
        with pytest.raises(ValidationError) as caught:
            await service.lodge.lodge_fax_xml(FAX, [first, second])
    assert caught.value.field == "objFile"
    assert "10,485,761 bytes" in caught.value.message
    assert lodge_requests(sandbox) == 0


async def test_an_mms_over_400_kb_is_refused_before_any_request(sandbox: SandboxThread) -> None:
    two = files(("a.png", sized(png(), 204_800)), ("b.png", sized(png(), 204_801)))
    async with lodge_service(sandbox, "http_post") as service:
        with pytest.raises(ValidationError) as caught:
            await service.lodge.lodge_multi_mms(MOBILE, two)
    assert "409,601 bytes" in caught.value.message
    assert "409,600 (400 KB)" in caught.value.message
    assert lodge_requests(sandbox) == 0


async def test_a_file_whose_bytes_do_not_match_its_name_is_refused_naming_its_slot(
    sandbox: SandboxThread,
) -> None:
    renamed = LodgeFile("holiday.png", b"MZ\x90\x00" + b"\x00" * 60)
    async with lodge_service(sandbox, "soap11") as service:
        with pytest.raises(ValidationError) as caught:
            await service.lodge.lodge_multi_mms(MOBILE, [files(("ok.gif", gif()))[0], renamed])
    assert caught.value.field == "FileName2"
    assert "does not look like a PNG image" in caught.value.message
    assert lodge_requests(sandbox) == 0


async def test_a_name_with_a_right_to_left_override_is_refused_before_any_request(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    disguised = LodgeFile("invoice\u202efdp.txt", b"Amount due: $12\n")
    async with lodge_service(sandbox, port) as service:
        with pytest.raises(ValidationError) as caught:
            await service.lodge.lodge_fax_xml(FAX, [files(("cover.pdf", pdf()))[0], disguised])
    assert caught.value.field == "FileName2"
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in caught.value.message
    assert "rename the file" in caught.value.message
    assert lodge_requests(sandbox) == 0
    assert messages(sandbox) == []


async def test_an_invalid_number_is_refused_before_any_request(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        with pytest.raises(ValidationError) as sms:
            await service.lodge.lodge_sms("0412 34", "x")
        with pytest.raises(ValidationError) as fax:
            await service.lodge.lodge_fax_xml("call me", cover_page="c")
    assert sms.value.field == "PhoneNumber"
    assert fax.value.field == "FaxNumber"
    assert lodge_requests(sandbox) == 0


async def test_text_that_xml_cannot_carry_is_refused_before_any_request(
    sandbox: SandboxThread,
) -> None:
    async with lodge_service(sandbox, "soap12") as service:
        with pytest.raises(ValidationError) as caught:
            await service.lodge.lodge_sms(MOBILE, "bell \x07")
    assert caught.value.field == "PhoneMessage"
    assert "U+0007" in caught.value.message
    assert lodge_requests(sandbox) == 0


async def test_a_namespace_other_than_the_services_is_named_with_the_fix(
    sandbox: SandboxThread,
) -> None:
    async with lodge_service(sandbox, "soap12", soap_namespace="http://tempuri.org/") as service:
        with pytest.raises(ValidationError) as caught:
            await service.lodge.lodge_sms(MOBILE, "x")
    assert caught.value.field == "soap_namespace"
    assert repr(sandbox.config.namespace) in caught.value.message
    assert endpoint_requests(sandbox, "lodge") == 0


async def test_the_http_ports_need_no_namespace(sandbox: SandboxThread) -> None:
    async with lodge_service(sandbox, "http_post", soap_namespace="http://tempuri.org/") as service:
        result = await service.lodge.lodge_sms(MOBILE, "x")
    assert result.ok
    assert endpoint_requests(sandbox, "wsdl") == 0


# ---- faults: retried only when surely not lodged ------------------------------------------


@pytest.mark.parametrize("port", ["soap12", "http_post"])
async def test_a_503_before_processing_is_retried_and_lodged_once(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        set_faults(sandbox, "lodge:503=0.5", seed=first_hits_second_misses(0.5))
        result = await service.lodge.lodge_sms(MOBILE, "once")
    assert result.ok
    assert len(messages(sandbox)) == 1
    assert endpoint_requests(sandbox, "lodge") == 2


async def test_429_is_retried_after_the_wait_it_asks_for(sandbox: SandboxThread) -> None:
    async with lodge_service(sandbox, "http_get") as service:
        set_faults(sandbox, "lodge:429=0.5@1", seed=first_hits_second_misses(0.5))
        result = await service.lodge.lodge_wap_push(MOBILE, "A", "https://example.com/")
    assert result.ok
    assert len(messages(sandbox)) == 1


async def test_a_gateway_that_keeps_answering_503_is_reported_as_not_lodged(
    sandbox: SandboxThread,
) -> None:
    set_faults(sandbox, "lodge:503=1")
    async with lodge_service(sandbox, "http_post") as service:
        with pytest.raises(TransientError) as caught:
            await service.lodge.lodge_sms(MOBILE, "x")
    assert not caught.value.maybe_processed
    assert messages(sandbox) == []


@pytest.mark.parametrize("port", ["soap11", "http_get"])
async def test_a_connection_dropped_after_processing_is_ambiguous_and_not_resent(
    sandbox: SandboxThread, port: LodgePort
) -> None:
    async with lodge_service(sandbox, port) as service:
        set_faults(sandbox, "lodge:drop_after=1")
        with pytest.raises(AmbiguousSendError) as caught:
            await service.lodge.lodge_sms(MOBILE, "maybe")
    assert "may or may not have lodged the SMS to 61412345678" in caught.value.message
    assert "no ExternalSystemId" in caught.value.message
    assert caught.value.recipients == ("61412345678",)
    assert len(messages(sandbox)) == 1
    assert endpoint_requests(sandbox, "lodge") == 1


async def test_an_answer_slower_than_the_read_timeout_is_ambiguous(sandbox: SandboxThread) -> None:
    quick = HttpSettings(read=0.3)
    async with lodge_service(sandbox, "soap12", http=quick) as service:
        set_faults(sandbox, "lodge:slow=1@2")
        with pytest.raises(AmbiguousSendError):
            await service.lodge.lodge_fax_xml(FAX, cover_page="slow")
    assert len(messages(sandbox)) == 1
    assert endpoint_requests(sandbox, "lodge") == 1


async def test_a_status_query_is_retried_after_a_dropped_connection(
    sandbox: SandboxThread,
) -> None:
    async with lodge_service(sandbox, "http_post") as service:
        lodged = await service.lodge.lodge_sms_with_reply_xml(MOBILE, "x", "WWW", "site")
        assert lodged.msg_id is not None
        set_faults(sandbox, "lodge:drop_after=0.5", seed=first_hits_second_misses(0.5))
        status = await service.lodge.get_message_status_xml(lodged.msg_id)
    assert status.msg_id == lodged.msg_id
    assert endpoint_requests(sandbox, "lodge") == 2


async def test_a_wsdl_that_fails_once_is_loaded_on_the_next_try(sandbox: SandboxThread) -> None:
    set_faults(sandbox, "wsdl:503=0.5", seed=first_hits_second_misses(0.5))
    async with lodge_service(sandbox, "soap11") as service:
        result = await service.lodge.lodge_sms(MOBILE, "x")
    assert result.ok
    assert endpoint_requests(sandbox, "wsdl") == 2


async def test_a_rate_limit_longer_than_the_policy_allows_is_reported(
    sandbox: SandboxThread,
) -> None:
    set_faults(sandbox, "lodge:429=1@60")
    async with lodge_service(sandbox, "http_post") as service:
        with pytest.raises(RateLimitedError) as caught:
            await service.lodge.lodge_sms(MOBILE, "x")
    assert caught.value.retry_after == 60
    assert messages(sandbox) == []
