// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// The relay project's own Permit2-compatible SignatureTransfer, written for the devnet.
//
// Compatibility target: signatures produced by viem or the Uniswap permit2-sdk for the
// canonical Permit2 at 0x000000000022D473030F116dDEE9F6B43aC78BA3 verify here unchanged:
// same EIP-712 domain (name "Permit2", chainId, verifyingContract; no version), same
// typehashes, same function selectors, same custom errors, same unordered-nonce bitmap.
//
// The runtime code is placed at the canonical address with `anvil_setCode`, so the contract
// has NO constructor and NO immutables: the domain separator is computed on every call from
// `block.chainid` and `address(this)`. Only the AllowanceTransfer half of Permit2 is absent.

/// @dev A token and an amount, as signed by the owner.
struct TokenPermissions {
    address token;
    uint256 amount;
}

/// @dev A single-token permit (the spender is implied: it is msg.sender).
struct PermitTransferFrom {
    TokenPermissions permitted;
    uint256 nonce;
    uint256 deadline;
}

/// @dev A multi-token permit (the spender is implied: it is msg.sender).
struct PermitBatchTransferFrom {
    TokenPermissions[] permitted;
    uint256 nonce;
    uint256 deadline;
}

/// @dev Where the spender sends the tokens, and how many (at most the permitted amount).
struct SignatureTransferDetails {
    address to;
    uint256 requestedAmount;
}

interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4);
}

contract Permit2 {
    // ---- errors (names and arguments as in Uniswap's Permit2) ----
    error SignatureExpired(uint256 signatureDeadline);
    error InvalidAmount(uint256 maxAmount);
    error InvalidNonce();
    error LengthMismatch();
    error InvalidSignatureLength();
    error InvalidSignature();
    error InvalidSigner();
    error InvalidContractSignature();
    error TransferFailed();

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Permit2");

    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    bytes32 private constant PERMIT_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)TokenPermissions(address token,uint256 amount)"
    );
    bytes32 private constant PERMIT_BATCH_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitBatchTransferFrom(TokenPermissions[] permitted,address spender,uint256 nonce,uint256 deadline)TokenPermissions(address token,uint256 amount)"
    );
    string private constant PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";
    string private constant PERMIT_BATCH_WITNESS_TRANSFER_FROM_TYPEHASH_STUB =
        "PermitBatchWitnessTransferFrom(TokenPermissions[] permitted,address spender,uint256 nonce,uint256 deadline,";

    uint256 private constant S_UPPER_BOUND = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    bytes32 private constant VS_S_MASK = 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff;

    /// owner => word position => bitmap of used nonces (bit = nonce & 255, word = nonce >> 8).
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    /// The EIP-712 domain separator for the current chain and this address.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, block.chainid, address(this)));
    }

    // ---- single-token transfers ----

    function permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 dataHash = keccak256(
            abi.encode(
                PERMIT_TRANSFER_FROM_TYPEHASH, _hashPermissions(permit.permitted), msg.sender, permit.nonce, permit.deadline
            )
        );
        _transferSingle(permit, transferDetails, owner, dataHash, signature);
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash = keccak256(abi.encodePacked(PERMIT_WITNESS_TRANSFER_FROM_TYPEHASH_STUB, witnessTypeString));
        bytes32 dataHash = keccak256(
            abi.encode(typeHash, _hashPermissions(permit.permitted), msg.sender, permit.nonce, permit.deadline, witness)
        );
        _transferSingle(permit, transferDetails, owner, dataHash, signature);
    }

    // ---- batch transfers ----

    function permitTransferFrom(
        PermitBatchTransferFrom calldata permit,
        SignatureTransferDetails[] calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        bytes32 dataHash = keccak256(
            abi.encode(
                PERMIT_BATCH_TRANSFER_FROM_TYPEHASH,
                _hashPermissionsArray(permit.permitted),
                msg.sender,
                permit.nonce,
                permit.deadline
            )
        );
        _transferBatch(permit, transferDetails, owner, dataHash, signature);
    }

    function permitWitnessTransferFrom(
        PermitBatchTransferFrom calldata permit,
        SignatureTransferDetails[] calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        bytes32 typeHash =
            keccak256(abi.encodePacked(PERMIT_BATCH_WITNESS_TRANSFER_FROM_TYPEHASH_STUB, witnessTypeString));
        bytes32 dataHash = keccak256(
            abi.encode(
                typeHash, _hashPermissionsArray(permit.permitted), msg.sender, permit.nonce, permit.deadline, witness
            )
        );
        _transferBatch(permit, transferDetails, owner, dataHash, signature);
    }

    /// Marks the nonces set in `mask` of word `wordPos` as used for msg.sender.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    // ---- internals ----

    function _transferSingle(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 dataHash,
        bytes calldata signature
    ) private {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _useUnorderedNonce(owner, permit.nonce);
        _verify(signature, _digest(dataHash), owner);
        _safeTransferFrom(permit.permitted.token, owner, transferDetails.to, transferDetails.requestedAmount);
    }

    function _transferBatch(
        PermitBatchTransferFrom calldata permit,
        SignatureTransferDetails[] calldata transferDetails,
        address owner,
        bytes32 dataHash,
        bytes calldata signature
    ) private {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        uint256 n = permit.permitted.length;
        if (n != transferDetails.length) revert LengthMismatch();
        _useUnorderedNonce(owner, permit.nonce);
        _verify(signature, _digest(dataHash), owner);
        for (uint256 i = 0; i < n; ++i) {
            TokenPermissions calldata permitted = permit.permitted[i];
            uint256 requested = transferDetails[i].requestedAmount;
            if (requested > permitted.amount) revert InvalidAmount(permitted.amount);
            if (requested != 0) _safeTransferFrom(permitted.token, owner, transferDetails[i].to, requested);
        }
    }

    function _hashPermissions(TokenPermissions calldata permitted) private pure returns (bytes32) {
        return keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permitted.token, permitted.amount));
    }

    function _hashPermissionsArray(TokenPermissions[] calldata permitted) private pure returns (bytes32) {
        bytes32[] memory hashes = new bytes32[](permitted.length);
        for (uint256 i = 0; i < permitted.length; ++i) {
            hashes[i] = _hashPermissions(permitted[i]);
        }
        return keccak256(abi.encodePacked(hashes));
    }

    function _digest(bytes32 dataHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), dataHash));
    }

    function _useUnorderedNonce(address owner, uint256 nonce) private {
        uint256 wordPos = nonce >> 8;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = nonceBitmap[owner][wordPos] ^= bit;
        if (flipped & bit == 0) revert InvalidNonce();
    }

    /// Accepts 65-byte (r, s, v) and 64-byte EIP-2098 (r, vs) signatures from EOAs, and
    /// EIP-1271 signatures from contract owners. High-s signatures are rejected.
    function _verify(bytes calldata signature, bytes32 digest, address claimedSigner) private view {
        if (claimedSigner.code.length > 0) {
            bytes4 magic = IERC1271(claimedSigner).isValidSignature(digest, signature);
            if (magic != IERC1271.isValidSignature.selector) revert InvalidContractSignature();
            return;
        }
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (signature.length == 65) {
            r = bytes32(signature[0:32]);
            s = bytes32(signature[32:64]);
            v = uint8(signature[64]);
        } else if (signature.length == 64) {
            r = bytes32(signature[0:32]);
            bytes32 vs = bytes32(signature[32:64]);
            s = vs & VS_S_MASK;
            v = uint8(uint256(vs) >> 255) + 27;
        } else {
            revert InvalidSignatureLength();
        }
        if (uint256(s) > S_UPPER_BOUND) revert InvalidSignature();
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
        if (signer != claimedSigner) revert InvalidSigner();
    }

    /// transferFrom that accepts tokens returning `true`, and tokens returning nothing.
    function _safeTransferFrom(address token, address from, address to, uint256 amount) private {
        (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(0x23b872dd, from, to, amount));
        if (!ok && ret.length > 0) {
            // bubble up the token's own revert reason (e.g. insufficient balance)
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        if (!ok || (ret.length != 0 && !abi.decode(ret, (bool))) || (ret.length == 0 && token.code.length == 0)) {
            revert TransferFailed();
        }
    }
}
