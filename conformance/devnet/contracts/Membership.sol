// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// The relay devnet's minimal ERC-721 "membership collection", used to test member fee
// tiers: holding at least one token makes an address a member. Only the owner mints.

contract Membership {
    error NotOwner();
    error InvalidReceiver(address receiver);
    error NonexistentToken(uint256 tokenId);
    error NotAuthorized();

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);

    string public name;
    string public symbol;
    address public owner;
    uint256 public totalSupply;

    mapping(uint256 => address) private owners;
    mapping(address => uint256) public balanceOf;
    mapping(uint256 => address) public getApproved;

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
        owner = msg.sender;
    }

    function ownerOf(uint256 tokenId) public view returns (address holder) {
        holder = owners[tokenId];
        if (holder == address(0)) revert NonexistentToken(tokenId);
    }

    /// ERC-165: ERC-165 itself and ERC-721.
    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 || interfaceId == 0x80ac58cd;
    }

    /// Mints the next token id (starting at 1) to `to`; owner only.
    function mint(address to) external returns (uint256 tokenId) {
        if (msg.sender != owner) revert NotOwner();
        if (to == address(0)) revert InvalidReceiver(to);
        tokenId = ++totalSupply;
        owners[tokenId] = to;
        balanceOf[to] += 1;
        emit Transfer(address(0), to, tokenId);
    }

    function approve(address approved, uint256 tokenId) external {
        if (msg.sender != ownerOf(tokenId)) revert NotAuthorized();
        getApproved[tokenId] = approved;
        emit Approval(msg.sender, approved, tokenId);
    }

    function transferFrom(address from, address to, uint256 tokenId) external {
        if (ownerOf(tokenId) != from) revert NotAuthorized();
        if (msg.sender != from && msg.sender != getApproved[tokenId]) revert NotAuthorized();
        if (to == address(0)) revert InvalidReceiver(to);
        delete getApproved[tokenId];
        balanceOf[from] -= 1;
        balanceOf[to] += 1;
        owners[tokenId] = to;
        emit Transfer(from, to, tokenId);
    }
}
