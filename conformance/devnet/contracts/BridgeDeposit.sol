// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// The relay devnet's bridge-deposit contract: the `transactionRequest` target that the
// aggregator simulators (LI.FI, Bungee, Squid, ... look-alikes) hand out. A user deposits on
// the source chain; the simulator, as owner, pays out of this contract's own inventory on the
// destination chain (or refunds on the source chain). Each quoteId settles at most once per
// chain. `token == address(0)` means the chain's native coin.

contract BridgeDeposit {
    error NotOwner();
    error AlreadySettled(bytes32 quoteId);
    error InvalidAmount();
    error TransferFailed();

    event Deposited(
        bytes32 indexed quoteId,
        address indexed sender,
        address token,
        uint256 amount,
        uint256 destChainId,
        address recipient
    );
    event PaidOut(bytes32 indexed quoteId, address indexed to, address token, uint256 amount);
    event Refunded(bytes32 indexed quoteId, address indexed to, address token, uint256 amount);

    address public owner;
    /// quoteId => true once paid out or refunded on this chain.
    mapping(bytes32 => bool) public settled;

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    receive() external payable {}

    function transferOwnership(address newOwner) external onlyOwner {
        owner = newOwner;
    }

    /// Pulls `amount` of `token` from msg.sender (who must have approved this contract), or
    /// takes msg.value when `token` is address(0).
    function deposit(address token, uint256 amount, uint256 destChainId, address recipient, bytes32 quoteId)
        external
        payable
    {
        if (amount == 0) revert InvalidAmount();
        if (token == address(0)) {
            if (msg.value != amount) revert InvalidAmount();
        } else {
            if (msg.value != 0) revert InvalidAmount();
            _call(token, abi.encodeWithSelector(0x23b872dd, msg.sender, address(this), amount));
        }
        emit Deposited(quoteId, msg.sender, token, amount, destChainId, recipient);
    }

    function payout(address token, address to, uint256 amount, bytes32 quoteId) external onlyOwner {
        _settle(quoteId);
        _send(token, to, amount);
        emit PaidOut(quoteId, to, token, amount);
    }

    function refund(address token, address to, uint256 amount, bytes32 quoteId) external onlyOwner {
        _settle(quoteId);
        _send(token, to, amount);
        emit Refunded(quoteId, to, token, amount);
    }

    function _settle(bytes32 quoteId) private {
        if (settled[quoteId]) revert AlreadySettled(quoteId);
        settled[quoteId] = true;
    }

    function _send(address token, address to, uint256 amount) private {
        if (token == address(0)) {
            (bool ok,) = to.call{value: amount}("");
            if (!ok) revert TransferFailed();
        } else {
            _call(token, abi.encodeWithSelector(0xa9059cbb, to, amount));
        }
    }

    /// Calls an ERC-20 method, accepting tokens that return `true` or nothing.
    function _call(address token, bytes memory data) private {
        (bool ok, bytes memory ret) = token.call(data);
        if (!ok || (ret.length != 0 && !abi.decode(ret, (bool))) || (ret.length == 0 && token.code.length == 0)) {
            revert TransferFailed();
        }
    }
}
