// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// The relay devnet's minimal smart-contract wallet, for ERC-1271 tests.
//
// DEVNET ONLY: one owner EOA; `isValidSignature` accepts a 65-byte (r, s, v) low-s signature
// by that owner over the hash as is (no wrapping, no replay protection across wallets), and
// `execute` lets the owner make the wallet call anything (e.g. approve Permit2 or a router).
// It is not a wallet to hold real funds.
contract TestWallet {
    error NotOwner();

    bytes4 private constant MAGIC = 0x1626ba7e;
    bytes4 private constant INVALID = 0xffffffff;
    uint256 private constant S_UPPER_BOUND = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// ERC-1271: 0x1626ba7e iff `signature` is the owner's low-s (r, s, v) signature of `hash`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return INVALID;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > S_UPPER_BOUND) return INVALID;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? MAGIC : INVALID;
    }

    /// Calls `target` with `value` and `data` as the wallet; bubbles the callee's revert.
    function execute(address target, uint256 value, bytes calldata data) external returns (bytes memory) {
        if (msg.sender != owner) revert NotOwner();
        (bool ok, bytes memory ret) = target.call{value: value}(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    receive() external payable {}
}
