"""`LodgeClient`: the legacy Lodge service, the 13 operations of the spec, on a profile's port.

Ports (`Profile.lodge_port`): `soap11` and `soap12` go through zeep's async client
(see `soap`), `http_get` and `http_post` through plain httpx (see
`http_ports`). Two substitutions, so that a profile's port choice never makes an
operation unavailable:

* the SOAP-only operations (`LodgeXML` and the two multi-MMS document operations)
  use SOAP 1.1 when the profile's port is an HTTP one;
* on `http_get`, a call carrying files or a long text goes by POST (see `http_ports`).

Everything a value check can refuse is refused before any request (numbers with the
profile's region, texts, URLs, files), as a `ValidationError` naming the Lodge field.

Retrying: `GetMessageStatusXML` is a query and is retried like every idempotent
call. Every other operation lodges messages, and the legacy interface has no
ExternalSystemId to look a message up by afterwards, so a send is repeated only
when it surely did not reach the service (no connection, 429, 503); when its answer
was lost or unreadable it is reported as `AmbiguousSendError`, never resent blindly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from typing import TypeVar

import httpx
from lxml import etree

from gwdesk.domain.models import LodgeResult, LodgeResults, LodgeText, MessageStatus
from gwdesk.domain.profile import LodgePort, Profile
from gwdesk.gateway.auth import Credentials
from gwdesk.gateway.errors import AmbiguousSendError, GatewayError, ProtocolError, ValidationError
from gwdesk.gateway.lodge import catalog as ops
from gwdesk.gateway.lodge import http_ports, results
from gwdesk.gateway.lodge.catalog import Operation
from gwdesk.gateway.lodge.documents import (
    LodgeMessage,
    LodgeMms,
    build_document,
    document_text,
    http_url,
    number,
    optional_text,
    required_text,
    sms_text,
)
from gwdesk.gateway.lodge.files import (
    FAX_FIELDS,
    FAX_RULES,
    MMS_FIELDS,
    MMS_RULES,
    CheckedFile,
    FileSource,
    read_files,
)
from gwdesk.gateway.lodge.soap import SoapPorts, SoapVersion
from gwdesk.gateway.retry import Retrier

Params = dict[str, object]
T = TypeVar("T")


class LodgeClient:
    """The Lodge service of one profile, over the facade's shared HTTP client."""

    def __init__(
        self,
        profile: Profile,
        credentials: Credentials,
        http: httpx.AsyncClient,
        *,
        retrier: Retrier | None = None,
        port: LodgePort | None = None,
        executor: Executor | None = None,
        soap: SoapPorts | None = None,
    ) -> None:
        if not profile.lodge_url:
            raise GatewayError(f"Profile {profile.name!r} has no Lodge URL.")
        self.profile = profile
        self.lodge_url = profile.lodge_url
        self.credentials = credentials
        self.http = http
        self.retrier = retrier or Retrier()
        self.port: LodgePort = port or profile.lodge_port
        http_ports.redact_passwords_in_logs()
        self._owns_soap = soap is None
        self.soap = soap or SoapPorts(
            http, self.lodge_url, profile.soap_namespace, self.retrier, executor=executor
        )

    def __repr__(self) -> str:
        return f"LodgeClient(profile={self.profile.name!r}, port={self.port!r})"

    def with_port(self, port: LodgePort) -> LodgeClient:
        """The same client on another port; the loaded WSDL is shared."""
        return LodgeClient(
            self.profile,
            self.credentials,
            self.http,
            retrier=self.retrier,
            port=port,
            soap=self.soap,
        )

    async def aclose(self) -> None:
        """Stop a WSDL load still under way; the HTTP client belongs to the facade."""
        if self._owns_soap:
            await self.soap.aclose()

    # ---- the wire --------------------------------------------------------------------------

    def _auth(self) -> Params:
        return {"Username": self.credentials.username, "Pwd": self.credentials.password.reveal()}

    def _soap_version_for(self, operation: Operation) -> SoapVersion | None:
        if self.port in ("soap11", "soap12"):
            return self.port
        return None if operation.http else "soap11"

    async def _raw(self, operation: Operation, params: Params, has_files: bool) -> object:
        version = self._soap_version_for(operation)
        if version is not None:
            return await self.soap.call(version, operation, params)
        method: http_ports.HttpMethod = "GET" if self.port == "http_get" else "POST"
        return await http_ports.call(
            self.http, self.lodge_url, operation, params, method=method, has_files=has_files
        )

    async def _text_call(self, operation: Operation, params: Params, has_files: bool) -> str:
        answer = await self._raw(operation, params, has_files)
        if answer is None:
            return ""
        if not isinstance(answer, str):
            raise ProtocolError(
                f"The answer of {operation.name} is not the text result it should be.",
                status=200,
                maybe_processed=operation.sends,
            )
        return answer

    async def _xml_call(
        self, operation: Operation, params: Params, has_files: bool
    ) -> etree._Element:
        return results.result_element(await self._raw(operation, params, has_files), operation)

    async def _send(
        self,
        operation: Operation,
        call: Callable[[], Awaitable[T]],
        *,
        what: str,
        recipients: Sequence[str],
    ) -> T:
        """One send, repeated only when it surely did not reach the service."""
        if self._soap_version_for(operation) is not None:
            await self.soap.loaded()  # a WSDL problem is not a send problem: settle it first

        async def once() -> T:
            try:
                return await call()
            except GatewayError as exc:
                if exc.maybe_processed:  # never resent blindly: there is no id to ask by
                    raise _ambiguous(what, recipients, exc) from exc
                raise

        return await self.retrier.send(once, operation.name)

    async def _send_text(
        self,
        operation: Operation,
        params: Params,
        *,
        what: str,
        recipient: str,
        has_files: bool = False,
    ) -> LodgeText:
        answer = await self._send(
            operation,
            lambda: self._text_call(operation, params, has_files),
            what=what,
            recipients=[recipient],
        )
        return results.text_result(answer, operation)

    async def _send_result(
        self,
        operation: Operation,
        params: Params,
        *,
        what: str,
        recipient: str,
        has_files: bool = False,
    ) -> LodgeResult:
        answer = await self._send(
            operation,
            lambda: self._xml_call(operation, params, has_files),
            what=what,
            recipients=[recipient],
        )
        return results.result(answer, operation)

    async def _send_document(
        self,
        operation: Operation,
        messages: Sequence[LodgeMessage],
        *,
        only: type[LodgeMms] | None = None,
        as_text: bool = False,
    ) -> LodgeResults:
        document = await build_document(
            messages,
            self.credentials.username,
            self.credentials.password,
            self.profile.region,
            only=only,
        )
        recipients = [
            m.findtext("PhoneNumber") or "" for m in document.iterfind("Messages/Message")
        ]
        has_files = document.find("Messages/Message/Attachment") is not None
        value: object = document_text(document) if as_text else document
        name = operation.params[0]  # docXML or strdocXML: a document operation's only one
        answer = await self._send(
            operation,
            lambda: self._xml_call(operation, {name: value}, has_files),
            what=f"document of {len(recipients)} message(s)",
            recipients=recipients,
        )
        return results.results(answer, operation)

    def _number(self, text: str, field: str = "PhoneNumber") -> str:
        return number(text, self.profile.region, field)

    # ---- the 13 operations -----------------------------------------------------------------

    async def lodge_sms(self, phone_number: str, text: str) -> LodgeText:
        """LodgeSMSMessage: a one-way SMS."""
        to = self._number(phone_number)
        params = {**self._auth(), "PhoneNumber": to, "PhoneMessage": sms_text(text, "PhoneMessage")}
        return await self._send_text(ops.LODGE_SMS, params, what="SMS", recipient=to)

    async def lodge_wap_push(self, phone_number: str, application_name: str, url: str) -> LodgeText:
        """LodgeWAPPush: a link the phone offers to open."""
        to = self._number(phone_number)
        params = {
            **self._auth(),
            "PhoneNumber": to,
            "ApplicationName": optional_text(application_name, "ApplicationName"),
            "URL": http_url(url, "URL"),
        }
        return await self._send_text(ops.LODGE_WAP_PUSH, params, what="WAP push", recipient=to)

    def _two_way(self, phone_number: str, text: str, reply_type: str, reply_path: str) -> Params:
        return {
            **self._auth(),
            "PhoneNumber": self._number(phone_number),
            "PhoneMessage": sms_text(text, "PhoneMessage"),
            "ReplyType": required_text(reply_type, "ReplyType").strip().upper(),
            "ReplyPath": required_text(reply_path, "ReplyPath").strip(),
        }

    async def lodge_sms_with_reply(
        self, phone_number: str, text: str, reply_type: str, reply_path: str
    ) -> LodgeText:
        """LodgeSMSMessageWithReply: a two-way SMS (ReplyType EMAIL, WWW, HTTP, TCP/IP, HEADER)."""
        params = self._two_way(phone_number, text, reply_type, reply_path)
        to = str(params["PhoneNumber"])
        return await self._send_text(
            ops.LODGE_SMS_WITH_REPLY, params, what="two-way SMS", recipient=to
        )

    async def lodge_sms_with_reply_xml(
        self, phone_number: str, text: str, reply_type: str, reply_path: str
    ) -> LodgeResult:
        """LodgeSMSMessageWithReplyXML: a two-way SMS whose result names its MsgID."""
        params = self._two_way(phone_number, text, reply_type, reply_path)
        to = str(params["PhoneNumber"])
        return await self._send_result(
            ops.LODGE_SMS_WITH_REPLY_XML, params, what="two-way SMS", recipient=to
        )

    async def get_message_status_xml(self, msg_id: str) -> MessageStatus:
        """GetMessageStatusXML: a query, so it is retried after passing failures."""
        operation = ops.GET_MESSAGE_STATUS_XML
        params = {**self._auth(), "MsgID": required_text(msg_id, "MsgID").strip()}
        element = await self.retrier.idempotent(
            lambda: self._xml_call(operation, params, False), operation.name
        )
        return results.status(element, operation)

    def _mms_params(self, phone_number: str, subject: str, text: str) -> Params:
        return {
            **self._auth(),
            "PhoneNumber": self._number(phone_number),
            "MMSSubject": optional_text(subject, "MMSSubject"),
            "MMSMessageText": optional_text(text, "MMSMessageText"),
        }

    async def lodge_mms(
        self, phone_number: str, file: FileSource, *, subject: str = "", text: str = ""
    ) -> LodgeText:
        """LodgeMMSMessage: an MMS with one attachment."""
        params = self._mms_params(phone_number, subject, text)
        [checked] = await read_files([file], MMS_RULES, MMS_FIELDS)
        params.update(FileName=checked.file_name, MMSContentBase64=checked.base64())
        return await self._send_text(
            ops.LODGE_MMS, params, what="MMS", recipient=str(params["PhoneNumber"]), has_files=True
        )

    async def lodge_multi_mms(
        self,
        phone_number: str,
        files: Sequence[FileSource],
        *,
        subject: str = "",
        text: str = "",
    ) -> LodgeText:
        """LodgeMultiMMSMessage: an MMS with one to three attachments."""
        params = self._mms_params(phone_number, subject, text)
        if not files:
            raise ValidationError(
                "An MMS needs at least one attachment.", field="MMSContentBase64", status=None
            )
        checked = await read_files(files, MMS_RULES, MMS_FIELDS)
        slots = (
            ("FileName", "MMSContentBase64"),
            ("FileName2", "MMSContent2Base64"),
            ("FileName3", "MMSContent3Base64"),
        )
        for (name_field, content_field), item in zip(slots, _padded(checked), strict=True):
            params[name_field] = item.file_name if item else ""
            params[content_field] = item.base64() if item else ""
        return await self._send_text(
            ops.LODGE_MULTI_MMS,
            params,
            what="MMS",
            recipient=str(params["PhoneNumber"]),
            has_files=True,
        )

    async def lodge_multi_mms_xml(self, messages: Sequence[LodgeMms]) -> LodgeResults:
        """LodgeMultiMMSMessageXML: MMS messages in a `<Lodge>` document; no MsgIDs come back."""
        return await self._send_document(ops.LODGE_MULTI_MMS_XML, messages, only=LodgeMms)

    async def lodge_multi_mms_xml_msgid(self, messages: Sequence[LodgeMms]) -> LodgeResults:
        """LodgeMultiMMSMessageXMLMSGID: as above, with each message's MsgID."""
        return await self._send_document(ops.LODGE_MULTI_MMS_XML_MSGID, messages, only=LodgeMms)

    async def lodge_fax_xml(
        self,
        fax_number: str,
        files: Sequence[FileSource] = (),
        *,
        subject: str = "",
        cover_page: str = "",
    ) -> LodgeResult:
        """LodgeFAXMessageXML: a fax of up to three files (a cover page alone will do)."""
        to = self._number(fax_number, "FaxNumber")
        cover = optional_text(cover_page, "CoverPageText")
        checked = await read_files(files, FAX_RULES, FAX_FIELDS)
        if not checked and not cover.strip():
            raise ValidationError(
                "A fax needs at least one file or a cover page.", field="objFile", status=None
            )
        params: Params = {
            **self._auth(),
            "FaxNumber": to,
            "FaxSubject": optional_text(subject, "FaxSubject"),
            "CoverPageText": cover,
        }
        slots = (("FileName", "objFile"), ("FileName2", "objFile2"), ("FileName3", "objFile3"))
        for (name_field, content_field), item in zip(slots, _padded(checked), strict=True):
            params[name_field] = item.file_name if item else ""
            params[content_field] = item.content if item else None
        return await self._send_result(
            ops.LODGE_FAX_XML, params, what="fax", recipient=to, has_files=bool(checked)
        )

    async def lodge_mms_by_url(
        self, phone_number: str, url: str, *, subject: str = "", text: str = ""
    ) -> LodgeText:
        """LodgeMMSMessageByURL: an MMS whose content the service fetches from `url`."""
        params = self._mms_params(phone_number, subject, text)
        params["URL"] = http_url(url, "URL")
        return await self._send_text(
            ops.LODGE_MMS_BY_URL, params, what="MMS", recipient=str(params["PhoneNumber"])
        )

    async def lodge_xml(self, messages: Sequence[LodgeMessage]) -> LodgeResults:
        """LodgeXML: SMS, WAP, MMS and fax messages in one `<Lodge>` document."""
        return await self._send_document(ops.LODGE_XML, messages)

    async def lodge_xml_by_arg(self, messages: Sequence[LodgeMessage]) -> LodgeResults:
        """LodgeXMLbyArg: as `lodge_xml`, the document sent as a string (HTTP ports too)."""
        return await self._send_document(ops.LODGE_XML_BY_ARG, messages, as_text=True)

    # ---- what the console calls ------------------------------------------------------------

    async def send_sms(
        self,
        phone_number: str,
        text: str,
        *,
        reply_type: str | None = None,
        reply_path: str | None = None,
    ) -> LodgeText | LodgeResult:
        """A one-way SMS, or a two-way one (with its MsgID) when a reply route is given."""
        if reply_type or reply_path:
            return await self.lodge_sms_with_reply_xml(
                phone_number, text, reply_type or "", reply_path or ""
            )
        return await self.lodge_sms(phone_number, text)

    async def send_wap_push(self, phone_number: str, application_name: str, url: str) -> LodgeText:
        return await self.lodge_wap_push(phone_number, application_name, url)

    async def send_mms(
        self,
        phone_number: str,
        *,
        files: Sequence[FileSource] = (),
        url: str | None = None,
        subject: str = "",
        text: str = "",
    ) -> LodgeText:
        """An MMS with one to three attachments, or by URL: the operation that fits."""
        if url is not None and files:
            raise ValidationError(
                "An MMS takes either attachments or a URL, not both.", field="URL", status=None
            )
        if url is not None:
            return await self.lodge_mms_by_url(phone_number, url, subject=subject, text=text)
        if len(files) == 1:
            return await self.lodge_mms(phone_number, files[0], subject=subject, text=text)
        return await self.lodge_multi_mms(phone_number, files, subject=subject, text=text)

    async def send_fax(
        self,
        fax_number: str,
        files: Sequence[FileSource] = (),
        *,
        subject: str = "",
        cover_page: str = "",
    ) -> LodgeResult:
        return await self.lodge_fax_xml(fax_number, files, subject=subject, cover_page=cover_page)

    async def send_document(self, messages: Sequence[LodgeMessage]) -> LodgeResults:
        """Several messages at once, each with its MsgID: `LodgeXML` on the SOAP ports,
        `LodgeXMLbyArg` on the HTTP ports (so no SOAP is needed there)."""
        if self.port in ("soap11", "soap12"):
            return await self.lodge_xml(messages)
        return await self.lodge_xml_by_arg(messages)

    async def send_mms_document(self, messages: Sequence[LodgeMms]) -> LodgeResults:
        """Several MMS messages, each with its MsgID (SOAP only; SOAP 1.1 on HTTP profiles)."""
        return await self.lodge_multi_mms_xml_msgid(messages)

    async def status(self, msg_id: str) -> MessageStatus:
        return await self.get_message_status_xml(msg_id)


def _padded(files: Sequence[CheckedFile]) -> list[CheckedFile | None]:
    return [*files, *([None] * (3 - len(files)))]


def _ambiguous(what: str, recipients: Sequence[str], cause: GatewayError) -> AmbiguousSendError:
    to = recipients[0] if len(recipients) == 1 else f"{len(recipients)} recipients"
    return AmbiguousSendError(
        f"The Lodge service may or may not have lodged the {what} to {to} ({cause.message}). "
        "The legacy interface has no ExternalSystemId to look a message up by, so gwdesk does "
        "not send it again by itself: check the account's message log (gwdesk logs "
        "--recipient NUMBER) before sending it again.",
        external_system_id=None,
        recipients=recipients,
    )
