// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// The relayer's own account code, for a relayer key pool (EIP-7702). The relayer's primary address
// — the Permit2 spender clients sign for, the holder of its float and reserves — delegates its code
// to this contract; from then on its pool keys (executors) send the relayer's transactions through
// it, each from its own nonce stream, while every call still runs as the primary address:
//
// - `run(to, value, data)`: an executor has the account call `to` with `value` (the account's own
//   ether) and `data`; a failing call reverts with the callee's own revert data.
// - `setExecutors(who, allowed)`: only the account itself (a transaction the primary key signs and
//   sends to its own address) adds or removes executors.
// - `isValidSignature` (ERC-1271): a signature by the primary key stays valid for contracts that
//   ask an address with code (Permit2 does).
//
// The only storage is the executor set, at a namespaced slot (keccak256("relay.relayer-account.
// executors") - 1), so another delegate's storage never collides with it. No constructor, no
// immutables: the same code serves every relayer.
contract RelayerAccount {
    error NotExecutor(address caller);
    error Unauthorized();

    event ExecutorSet(address indexed executor, bool allowed);

    bytes32 private constant EXECUTORS_SLOT = 0x89086efe05c8d143e0f8c34b56e274bd496ea362332f45e357b106b1f5ca62a3;
    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;
    uint256 private constant S_UPPER_BOUND = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    receive() external payable {}

    function _executors() private pure returns (mapping(address => bool) storage set) {
        bytes32 slot = EXECUTORS_SLOT;
        assembly {
            set.slot := slot
        }
    }

    /// Whether `who` may send the account's transactions.
    function isExecutor(address who) public view returns (bool) {
        return _executors()[who];
    }

    /// Adds (`allowed`) or removes executors; only the account itself.
    function setExecutors(address[] calldata who, bool allowed) external {
        if (msg.sender != address(this)) revert Unauthorized();
        mapping(address => bool) storage set = _executors();
        for (uint256 i = 0; i < who.length; ++i) {
            set[who[i]] = allowed;
            emit ExecutorSet(who[i], allowed);
        }
    }

    /// Calls `to` as the account; only an executor. Bubbles the callee's revert data.
    function run(address to, uint256 value, bytes calldata data) external payable returns (bytes memory result) {
        if (!_executors()[msg.sender]) revert NotExecutor(msg.sender);
        bool ok;
        (ok, result) = to.call{value: value}(data);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }

    /// ERC-1271: valid when `signature` (r ‖ s ‖ v, low s) over `hash` is the account key's own.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > S_UPPER_BOUND) return 0xffffffff;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == address(this) ? ERC1271_MAGIC : bytes4(0xffffffff);
    }
}
