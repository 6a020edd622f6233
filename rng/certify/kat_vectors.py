"""A handful of NIST CAVP known-answer vectors for HMAC_DRBG (SHA-256), kept with the code.

The report must not depend on the test folder, so the known-answer tests it runs are data
here: the first vector of two parameter groups (no personalization and no additional input;
256-bit personalization and additional input) from each of NIST's ``HMAC_DRBG.rsp`` files
"no reseed" and "reseed, prediction resistance false" (CAVS 14.3, ``drbgtestvectors.zip``;
the same files are replayed in full by ``tests/rng/test_cavp.py``). Hex strings; empty
means the field is empty in the file. Each vector instantiates, optionally reseeds, and
generates 1024 bits twice; ``returned_bits`` is the second output.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CAVP_VECTORS", "CavpVector"]


@dataclass(frozen=True, slots=True)
class CavpVector:
    kind: str  # "no_reseed" or "pr_false" (the .rsp file it comes from)
    parameters: str  # the [SHA-256] group (all: EntropyInputLen=256 NonceLen=128, 1024 bits)
    count: int
    entropy_input: str
    nonce: str
    personalization: str
    entropy_input_reseed: str
    additional_input_reseed: str
    additional_input: tuple[str, ...]
    returned_bits: str


CAVP_VECTORS: tuple[CavpVector, ...] = (
    CavpVector(
        kind="no_reseed",
        parameters="PersonalizationStringLen=0 AdditionalInputLen=0",
        count=0,
        entropy_input="ca851911349384bffe89de1cbdc46e6831e44d34a4fb935ee285dd14b71a7488",
        nonce="659ba96c601dc69fc902940805ec0ca8",
        personalization="",
        entropy_input_reseed="",
        additional_input_reseed="",
        additional_input=(
            "",
            "",
        ),
        returned_bits=(
            "e528e9abf2dece54d47c7e75e5fe302149f817ea9fb4bee6f4199697d04d5b89"
            "d54fbb978a15b5c443c9ec21036d2460b6f73ebad0dc2aba6e624abf07745bc1"
            "07694bb7547bb0995f70de25d6b29e2d3011bb19d27676c07162c8b5ccde0668"
            "961df86803482cb37ed6d5c0bb8d50cf1f50d476aa0458bdaba806f48be9dcb8"
        ),
    ),
    CavpVector(
        kind="no_reseed",
        parameters="PersonalizationStringLen=256 AdditionalInputLen=256",
        count=0,
        entropy_input="5d3286bc53a258a53ba781e2c4dcd79a790e43bbe0e89fb3eed39086be34174b",
        nonce="c5422294b7318952ace7055ab7570abf",
        personalization="2dba094d008e150d51c4135bb2f03dcde9cbf3468a12908a1b025c120c985b9d",
        entropy_input_reseed="",
        additional_input_reseed="",
        additional_input=(
            "793a7ef8f6f0482beac542bb785c10f8b7b406a4de92667ab168ecc2cf7573c6",
            "2238cdb4e23d629fe0c2a83dd8d5144ce1a6229ef41dabe2a99ff722e510b530",
        ),
        returned_bits=(
            "d04678198ae7e1aeb435b45291458ffde0891560748b43330eaf866b5a6385e7"
            "4c6fa5a5a44bdb284d436e98d244018d6acedcdfa2e9f499d8089e4db86ae89a"
            "6ab2d19cb705e2f048f97fb597f04106a1fa6a1416ad3d859118e079a0c319eb"
            "95686f4cbcce3b5101c7a0b010ef029c4ef6d06cdfac97efb9773891688c37cf"
        ),
    ),
    CavpVector(
        kind="pr_false",
        parameters="PersonalizationStringLen=0 AdditionalInputLen=0",
        count=0,
        entropy_input="06032cd5eed33f39265f49ecb142c511da9aff2af71203bffaf34a9ca5bd9c0d",
        nonce="0e66f71edc43e42a45ad3c6fc6cdc4df",
        personalization="",
        entropy_input_reseed="01920a4e669ed3a85ae8a33b35a74ad7fb2a6bb4cf395ce00334a9c9a5a5d552",
        additional_input_reseed="",
        additional_input=(
            "",
            "",
        ),
        returned_bits=(
            "76fc79fe9b50beccc991a11b5635783a83536add03c157fb30645e611c2898bb"
            "2b1bc215000209208cd506cb28da2a51bdb03826aaf2bd2335d576d519160842"
            "e7158ad0949d1a9ec3e66ea1b1a064b005de914eac2e9d4f2d72a8616a802254"
            "22918250ff66a41bd2f864a6a38cc5b6499dc43f7f2bd09e1e0f8f5885935124"
        ),
    ),
    CavpVector(
        kind="pr_false",
        parameters="PersonalizationStringLen=256 AdditionalInputLen=256",
        count=0,
        entropy_input="cdb0d9117cc6dbc9ef9dcb06a97579841d72dc18b2d46a1cb61e314012bdf416",
        nonce="d0c0d01d156016d0eb6b7e9c7c3c8da8",
        personalization="6f0fb9eab3f9ea7ab0a719bfa879bf0aaed683307fda0c6d73ce018b6e34faaa",
        entropy_input_reseed="8ec6f7d5a8e2e88f43986f70b86e050d07c84b931bcf18e601c5a3eee3064c82",
        additional_input_reseed="1ab4ca9014fa98a55938316de8ba5a68c629b0741bdd058c4d70c91cda5099b3",
        additional_input=(
            "16e2d0721b58d839a122852abd3bf2c942a31c84d82fca74211871880d7162ff",
            "53686f042a7b087d5d2eca0d2a96de131f275ed7151189f7ca52deaa78b79fb2",
        ),
        returned_bits=(
            "dda04a2ca7b8147af1548f5d086591ca4fd951a345ce52b3cd49d47e84aa31a1"
            "83e31fbc42a1ff1d95afec7143c8008c97bc2a9c091df0a763848391f68cb4a3"
            "66ad89857ac725a53b303ddea767be8dc5f605b1b95f6d24c9f06be65a973a08"
            "9320b3cc42569dcfd4b92b62a993785b0301b3fc452445656fce22664827b88f"
        ),
    ),
)
