// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// The relay's EIP-7702 batch executor (spec §4.8). An EOA delegates its code to this contract
// with a type-4 authorization; from then on, calls to the EOA run this code in the EOA's context.
//
// - `execute(mode, executionData)`: ERC-7821 minimal batch executor, callable only by the account
//   itself (mode 0x01000000000000000000…: executionData = abi.encode(Call[])).
// - `executeSigned(calls, nonce, deadline, signature)`: anyone (the relayer) submits a batch the
//   account signed with EIP-712, domain {name "RelayDelegate", version "1", chainId,
//   verifyingContract: the account}, type
//   Batch(Call[] calls,uint256 nonce,uint256 deadline)Call(address to,uint256 value,bytes data).
//   The nonce is sequential per account; a low-s (r, s, v) signature by the account is required.
//
// The only storage is the batch nonce, at a namespaced slot so another delegate's storage never
// collides with it. No constructor, no immutables: the same code serves every account.
contract RelayDelegate {
    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    error Unauthorized();
    error UnsupportedExecutionMode();
    error BatchExpired(uint256 deadline);
    error InvalidNonce(uint256 expected, uint256 given);
    error InvalidSignature();
    error CallFailed(uint256 index, bytes reason);

    event BatchExecuted(uint256 indexed nonce, uint256 calls);

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("RelayDelegate");
    bytes32 private constant VERSION_HASH = keccak256("1");
    bytes32 public constant CALL_TYPEHASH = keccak256("Call(address to,uint256 value,bytes data)");
    bytes32 public constant BATCH_TYPEHASH =
        keccak256("Batch(Call[] calls,uint256 nonce,uint256 deadline)Call(address to,uint256 value,bytes data)");
    // keccak256("relay.delegate.nonce") - 1
    bytes32 private constant NONCE_SLOT = 0x80dce0b56883cff5d10ecc33ba54b39e4099aabb7515d95fd2c9a12911a8b07a;
    bytes32 private constant MODE_BATCH = 0x0100000000000000000000000000000000000000000000000000000000000000;
    uint256 private constant S_UPPER_BOUND = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    receive() external payable {}

    /// The next batch nonce `executeSigned` accepts.
    function nonce() public view returns (uint256 n) {
        bytes32 slot = NONCE_SLOT;
        assembly {
            n := sload(slot)
        }
    }

    /// The EIP-712 domain separator of this account.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// ERC-7821: the modes `execute` supports (a single batch without opData).
    function supportsExecutionMode(bytes32 mode) public pure returns (bool) {
        return mode == MODE_BATCH;
    }

    /// ERC-7821: runs `abi.decode(executionData, (Call[]))`, only for the account itself.
    function execute(bytes32 mode, bytes calldata executionData) external payable {
        if (msg.sender != address(this)) revert Unauthorized();
        if (!supportsExecutionMode(mode)) revert UnsupportedExecutionMode();
        _run(abi.decode(executionData, (Call[])));
    }

    /// Runs a batch the account signed (see the header); anyone may submit it.
    function executeSigned(Call[] calldata calls, uint256 batchNonce, uint256 deadline, bytes calldata signature)
        external
        payable
    {
        if (block.timestamp > deadline) revert BatchExpired(deadline);
        uint256 expected = nonce();
        if (batchNonce != expected) revert InvalidNonce(expected, batchNonce);
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), _batchHash(calls, batchNonce, deadline)));
        if (_recover(digest, signature) != address(this)) revert InvalidSignature();
        bytes32 slot = NONCE_SLOT;
        assembly {
            sstore(slot, add(expected, 1))
        }
        _run(calls);
        emit BatchExecuted(batchNonce, calls.length);
    }

    function _batchHash(Call[] calldata calls, uint256 batchNonce, uint256 deadline) private pure returns (bytes32) {
        bytes32[] memory hashes = new bytes32[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            hashes[i] = keccak256(abi.encode(CALL_TYPEHASH, calls[i].to, calls[i].value, keccak256(calls[i].data)));
        }
        return keccak256(abi.encode(BATCH_TYPEHASH, keccak256(abi.encodePacked(hashes)), batchNonce, deadline));
    }

    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (uint256(s) > S_UPPER_BOUND || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    function _run(Call[] memory calls) private {
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory reason) = calls[i].to.call{value: calls[i].value}(calls[i].data);
            if (!ok) revert CallFailed(i, reason);
        }
    }
}
